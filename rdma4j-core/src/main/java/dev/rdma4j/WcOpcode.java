package dev.rdma4j;

/** What a work completion completed ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    /** {@code IBV_WC_SEND}. */
    SEND(0),
    /** {@code IBV_WC_RDMA_WRITE}. */
    RDMA_WRITE(1),
    /** {@code IBV_WC_RDMA_READ}. */
    RDMA_READ(2),
    /** {@code IBV_WC_COMP_SWAP}. */
    COMP_SWAP(3),
    /** {@code IBV_WC_FETCH_ADD}. */
    FETCH_ADD(4),
    /** {@code IBV_WC_BIND_MW}. */
    BIND_MW(5),
    /** {@code IBV_WC_LOCAL_INV}. */
    LOCAL_INV(6),
    /** {@code IBV_WC_TSO}. */
    TSO(7),
    /** {@code IBV_WC_RECV}: a receive consumed by a send (with or without immediate). */
    RECV(128),
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}: a receive consumed by an RDMA write with immediate. */
    RECV_RDMA_WITH_IMM(129),
    /**
     * A value this version of rdma4j does not know; also what {@link WorkCompletions#opcode(int)} gives for a failed
     * send-queue request whose (undefined) C opcode names a receive.
     */
    UNKNOWN(-1);

    private final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_wc_opcode} number
     */
    public int code() {
        return code;
    }

    /**
     * Maps a C value; allocation-free.
     *
     * @param code the number
     * @return the constant, or {@code UNKNOWN}
     */
    public static WcOpcode of(int code) {
        return switch (code) {
            case 0 -> SEND;
            case 1 -> RDMA_WRITE;
            case 2 -> RDMA_READ;
            case 3 -> COMP_SWAP;
            case 4 -> FETCH_ADD;
            case 5 -> BIND_MW;
            case 6 -> LOCAL_INV;
            case 7 -> TSO;
            case 128 -> RECV;
            case 129 -> RECV_RDMA_WITH_IMM;
            default -> UNKNOWN;
        };
    }

    /**
     * Whether this completes a receive. An opcode from {@link WorkCompletions#opcode(int)} or
     * {@link WorkCompletion#opcode()} answers right for failed completions too (rdma4j knows each request's
     * direction); a raw C value of a failed completion would not.
     *
     * @return {@code true} for {@code RECV} and {@code RECV_RDMA_WITH_IMM}
     */
    public boolean isReceive() {
        return (code & 128) != 0;
    }
}
