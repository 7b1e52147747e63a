package dev.rdma4j.net.protocol;

/**
 * The 32-bit immediate every message of the protocol carries (RDMA SEND WITH IMMEDIATE): bits 0-15 give the peer
 * that many data credits, bits 16-19 that many control credits, bits 20-23 say that many of the peer's rendezvous
 * were read, bit 28 that the message announces a rendezvous, bit 29 that it spent a control credit (a credit-only or
 * mark message), bit 30 that the sender closes (its disconnect is then no reset), bit 31 that its stream ends.
 * Bits 24-27 are zero. A message without immediate data reads as 0: a data message that grants nothing.
 *
 * <p>Threading: stateless (static methods only).
 */
public final class Immediate {
    /** The most data credits one immediate grants (bits 0-15). */
    public static final int MAX_DATA_GRANTS = 0xFFFF;
    /** The most control credits one immediate grants (bits 16-19). */
    public static final int MAX_CONTROL_GRANTS = 0xF;
    /** The most rendezvous reads one immediate reports (bits 20-23). */
    public static final int MAX_READS_DONE = 0xF;
    /** Bit 28: the message announces a rendezvous (its payload says where the bytes are). */
    public static final int RENDEZVOUS = 1 << 28;
    /** Bit 29: the message spent a control credit (it carries credits or marks, no data). */
    public static final int CONTROL = 1 << 29;
    /** Bit 30: the sender closes; its disconnect that follows is the normal end, not a reset. */
    public static final int CLOSE = 1 << 30;
    /** Bit 31: the sender's stream ends ({@code shutdownOutput}). */
    public static final int END_OF_STREAM = 1 << 31;
    /** The marks: every bit that is not a count. */
    public static final int FLAGS = RENDEZVOUS | CONTROL | CLOSE | END_OF_STREAM;

    private static final int CONTROL_SHIFT = 16;
    private static final int READS_SHIFT = 20;

    private Immediate() {
    }

    /**
     * The immediate for these counts and marks.
     *
     * @param dataGrants    0 to {@link #MAX_DATA_GRANTS}
     * @param controlGrants 0 to {@link #MAX_CONTROL_GRANTS}
     * @param readsDone     0 to {@link #MAX_READS_DONE}
     * @param flags         a combination of {@link #FLAGS}
     * @return the word
     * @throws IllegalArgumentException if a count is out of its range or {@code flags} has other bits
     */
    public static int encode(int dataGrants, int controlGrants, int readsDone, int flags) {
        if (dataGrants < 0 || dataGrants > MAX_DATA_GRANTS || controlGrants < 0 || controlGrants > MAX_CONTROL_GRANTS
                || readsDone < 0 || readsDone > MAX_READS_DONE || (flags & ~FLAGS) != 0) {
            throw new IllegalArgumentException("no immediate for data grants " + dataGrants + ", control grants "
                    + controlGrants + ", reads done " + readsDone + ", flags 0x" + Integer.toHexString(flags));
        }
        return dataGrants | controlGrants << CONTROL_SHIFT | readsDone << READS_SHIFT | flags;
    }

    /**
     * The data credits {@code imm} grants.
     *
     * @param imm an immediate
     * @return 0 to {@link #MAX_DATA_GRANTS}
     */
    public static int dataGrants(int imm) {
        return imm & MAX_DATA_GRANTS;
    }

    /**
     * The control credits {@code imm} grants.
     *
     * @param imm an immediate
     * @return 0 to {@link #MAX_CONTROL_GRANTS}
     */
    public static int controlGrants(int imm) {
        return imm >>> CONTROL_SHIFT & MAX_CONTROL_GRANTS;
    }

    /**
     * How many of this side's rendezvous the peer says it read.
     *
     * @param imm an immediate
     * @return 0 to {@link #MAX_READS_DONE}
     */
    public static int readsDone(int imm) {
        return imm >>> READS_SHIFT & MAX_READS_DONE;
    }

    /**
     * Whether the message is a data message (it consumed one of the peer's data credits): not {@link #CONTROL}.
     *
     * @param imm an immediate
     * @return true for data
     */
    public static boolean isData(int imm) {
        return (imm & CONTROL) == 0;
    }

    /**
     * Whether the message announces a rendezvous.
     *
     * @param imm an immediate
     * @return true if {@link #RENDEZVOUS} is set
     */
    public static boolean isRendezvous(int imm) {
        return (imm & RENDEZVOUS) != 0;
    }

    /**
     * Whether the sender closes.
     *
     * @param imm an immediate
     * @return true if {@link #CLOSE} is set
     */
    public static boolean isClose(int imm) {
        return (imm & CLOSE) != 0;
    }

    /**
     * Whether the sender's stream ends.
     *
     * @param imm an immediate
     * @return true if {@link #END_OF_STREAM} is set
     */
    public static boolean isEndOfStream(int imm) {
        return (imm & END_OF_STREAM) != 0;
    }

    /**
     * The immediate spelled out, for diagnostics.
     *
     * @param imm an immediate
     * @return e.g. {@code "data 3, control 1, reads 0 [CONTROL]"}
     */
    public static String toString(int imm) {
        return "data " + dataGrants(imm) + ", control " + controlGrants(imm) + ", reads " + readsDone(imm)
                + (isRendezvous(imm) ? " [RENDEZVOUS]" : "") + (isData(imm) ? "" : " [CONTROL]")
                + (isClose(imm) ? " [CLOSE]" : "") + (isEndOfStream(imm) ? " [END_OF_STREAM]" : "");
    }
}
