package dev.rdma4j.net.protocol;

/**
 * Credit-based flow control of one connection, both ways. Each side posts its data receives and
 * {@link #CONTROL_RECEIVES} more; a posted receive is a credit the peer learns of in the immediate of a later message
 * ({@link #takeGrants}). A data message spends a data credit, a message that only carries credits or marks a control
 * credit (marked {@link Immediate#CONTROL}); control receives are posted again as soon as they complete, data
 * receives when the application gives their buffer back. So a side never sends when the peer has no receive posted
 * for it, and needs no receiver-not-ready (RNR) retry.
 *
 * <p>Liveness: a side owing data credits sends a credit-only message when the peer may have run out
 * ({@link #creditMessageDue}). The last control credit is spent only on a message that grants data credits, and the
 * data message it enables carries the control credit back: control credits never all stay spent while the peer
 * waits for data credits ({@code ProtocolPropertyTest} checks this, and found the deadlock without that rule).
 *
 * <p>Threading: not thread-safe; owned by one connection or channel, used by one thread at a time (see the package).
 */
public final class Credits {
    /** Receives each side posts beyond its data receives, for credit-only and mark messages. */
    public static final int CONTROL_RECEIVES = 2;

    /** Data grants owed that make a credit-only message due by themselves: half the data receives, at least 1. */
    private final int grantsDue;
    /** Data messages this side may still send (the peer's data receives granted and not yet consumed). */
    private int sendCredits;
    /** Credit-only / mark messages this side may still send. */
    private int controlCredits = CONTROL_RECEIVES;
    /** Data receives posted again and not yet granted to the peer. */
    private int dataGrantsOwed;
    /** Control receives posted again and not yet granted to the peer. */
    private int controlGrantsOwed;
    /** The peer's rendezvous read and not yet reported to it. */
    private int readsDoneOwed;
    /** Data messages the peer may still send (this side's data receives granted and not yet consumed). */
    private int peerCredits;

    /**
     * Credits of a side that posts {@code dataReceives} data receives (and {@link #CONTROL_RECEIVES} control ones),
     * with no data credit yet: either {@link #peerGranted} (the peer's count, learnt while connecting) and
     * {@link #peerKnows}, or {@link #reposted} each receive so the first messages grant them.
     *
     * @param dataReceives this side's data receives, at least 1: the peer is sent credits when it may be out of them
     *                     and half of them are owed
     * @throws IllegalArgumentException if {@code dataReceives} is less than 1
     */
    public Credits(int dataReceives) {
        if (dataReceives < 1) {
            throw new IllegalArgumentException("a side needs at least one data receive: " + dataReceives);
        }
        this.grantsDue = Math.max(1, dataReceives / 2);
    }

    /**
     * The peer granted {@code n} data credits outside any immediate (its receive count, learnt while connecting).
     *
     * @param n credits, not negative
     */
    public void peerGranted(int n) {
        sendCredits += n;
    }

    /**
     * The peer knows of {@code n} of this side's data receives outside any immediate (this side's receive count,
     * sent while connecting): they are its credits, not owed.
     *
     * @param n credits, not negative
     */
    public void peerKnows(int n) {
        peerCredits += n;
    }

    /**
     * Whether a data message may go: this side holds a data credit.
     *
     * @return true if {@link #spendData} may be called
     */
    public boolean canSendData() {
        return sendCredits > 0;
    }

    /** A data message goes: spends a data credit (its immediate comes from {@link #takeGrants}). */
    public void spendData() {
        if (sendCredits <= 0) {
            throw new IllegalStateException("a data message without a data credit");
        }
        sendCredits--;
    }

    /**
     * For a message without data (credits, marks) about to go: spends a control credit and returns
     * {@link Immediate#CONTROL}; without one, a data credit when {@code urgent} (a mark, or rendezvous reads to
     * report: the peer holds memory until it hears) and returns 0 (the message then counts as data at the peer).
     *
     * <p>The last control credit is kept for a message that grants data credits: a message that grants none (reads
     * done, marks) enables no data message of the peer, which is what carries control credits back, so spending the
     * last one on it could leave this side unable ever to tell a waiting peer of its receives.
     *
     * @param urgent whether a data credit may be spent when no control credit is left
     * @return the mark to put in the immediate ({@link Immediate#CONTROL} or 0), or -1 if no credit allows the message
     */
    public int spendMark(boolean urgent) {
        if (controlCredits > 1 || controlCredits == 1 && dataGrantsOwed > 0) {
            controlCredits--;
            return Immediate.CONTROL;
        }
        if (urgent && sendCredits > 0) {
            sendCredits--;
            return 0;
        }
        return -1;
    }

    /**
     * For the last message this side sends (a close): spends any control credit, else a data credit; nothing is kept
     * back, as nothing follows.
     *
     * @return as {@link #spendMark}
     */
    public int spendLastMark() {
        if (controlCredits > 0) {
            controlCredits--;
            return Immediate.CONTROL;
        }
        return spendMark(true);
    }

    /**
     * The immediate of a message about to go (its credit spent): hands over the credits and reads owed, as many as one
     * immediate holds (the rest stays owed), with {@code flags}.
     *
     * @param flags a combination of {@link Immediate#FLAGS}
     * @return the immediate
     */
    public int takeGrants(int flags) {
        int g = Math.min(dataGrantsOwed, Immediate.MAX_DATA_GRANTS);
        int c = Math.min(controlGrantsOwed, Immediate.MAX_CONTROL_GRANTS);
        int d = Math.min(readsDoneOwed, Immediate.MAX_READS_DONE);
        dataGrantsOwed -= g;
        controlGrantsOwed -= c;
        readsDoneOwed -= d;
        peerCredits += g;
        return Immediate.encode(g, c, d, flags);
    }

    /**
     * A message of the peer arrived with {@code imm}: its credits are this side's; a data message consumed one of the
     * peer's credits. (The rendezvous reads it reports are the caller's: {@link Immediate#readsDone}.)
     *
     * @param imm its immediate (0 if it had none)
     */
    public void received(int imm) {
        sendCredits += Immediate.dataGrants(imm);
        controlCredits += Immediate.controlGrants(imm);
        if (Immediate.isData(imm)) {
            peerCredits--;
        }
    }

    /**
     * A receive was posted again: a credit owed to the peer.
     *
     * @param data whether it was a data receive (given back by the application) or a control one
     */
    public void reposted(boolean data) {
        if (data) {
            dataGrantsOwed++;
        } else {
            controlGrantsOwed++;
        }
    }

    /** One of the peer's rendezvous was read: owed to the peer in a later immediate. */
    public void readDone() {
        readsDoneOwed++;
    }

    /**
     * Whether a credit-only message should go now: rendezvous reads are owed (the peer holds that memory until it
     * hears), or data credits are owed and either half the data receives are or the peer may have none left.
     *
     * @return true if the caller should send a credit-only message ({@link #spendMark}, {@link #takeGrants})
     */
    public boolean creditMessageDue() {
        return readsDoneOwed > 0
                || dataGrantsOwed > 0 && (dataGrantsOwed >= grantsDue || peerCredits <= 0);
    }

    /**
     * Whether data credits are owed to the peer (receives posted again and not yet granted).
     *
     * @return true if some are
     */
    public boolean owesData() {
        return dataGrantsOwed > 0;
    }

    /**
     * Whether anything is owed to the peer (credits of either kind, or reads).
     *
     * @return true if a message would carry something
     */
    public boolean owes() {
        return dataGrantsOwed > 0 || controlGrantsOwed > 0 || readsDoneOwed > 0;
    }

    /**
     * Data credits this side holds.
     *
     * @return the count
     */
    public int sendCredits() {
        return sendCredits;
    }

    /**
     * Control credits this side holds.
     *
     * @return the count
     */
    public int controlCredits() {
        return controlCredits;
    }

    /**
     * Data credits the peer holds, as far as this side knows (granted and not yet seen consumed).
     *
     * @return the count
     */
    public int peerCredits() {
        return peerCredits;
    }

    /**
     * Rendezvous reads not yet reported to the peer.
     *
     * @return the count
     */
    public int readsDoneOwed() {
        return readsDoneOwed;
    }

    /**
     * The counters, for diagnostics.
     *
     * @return e.g. {@code "credits 3+2 owed 1+0 peer 7"}
     */
    @Override
    public String toString() {
        return "credits " + sendCredits + "+" + controlCredits + " owed " + dataGrantsOwed + "+" + controlGrantsOwed
                + (readsDoneOwed > 0 ? " reads " + readsDoneOwed : "") + " peer " + peerCredits;
    }
}
