package dev.rdma4j;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The native {@code wr_id} of every posted request is rdma4j's, not the caller's: it names the owning
 * work queue (a registry slot plus a generation, so completions of a destroyed queue are recognised
 * as stale), the direction, and a sequence number into that queue's {@link WorkRing}. The caller's
 * own wr_id is kept in the ring and handed back by {@link CompletionQueue#poll}.
 *
 * <pre>  63........40 39  38.............0
 *   owner token  recv  sequence</pre>
 */
final class WorkRequestIds {
    /** Something that owns work rings and takes their completions: a queue pair or an SRQ. */
    interface Owner {
        /**
         * A completion for (recv, seq) arrived: release what the request held.
         *
         * @return the caller's wr_id
         */
        long complete(boolean recv, long seq, WorkCompletions wcs, int i);

        int token();

        /** The queue pair's driver ({@link dev.rdma4j.internal.QpDriver}), or null. */
        dev.rdma4j.internal.QpDriver driver();
    }

    private static final int SLOT_BITS = 16;
    private static final int SLOTS = 1 << SLOT_BITS;
    static final long SEQ_MASK = (1L << 39) - 1;
    private static final AtomicReferenceArray<Owner> OWNERS = new AtomicReferenceArray<>(SLOTS);
    private static final int[] GENERATIONS = new int[SLOTS];
    private static int next;

    private WorkRequestIds() {
    }

    /** A token for a new owner: slot plus generation. */
    static synchronized int register(java.util.function.IntFunction<Owner> owner) {
        for (int i = 0; i < SLOTS; i++) {
            int slot = (next + i) & (SLOTS - 1);
            if (OWNERS.get(slot) == null) {
                next = slot + 1;
                int gen = GENERATIONS[slot] = (GENERATIONS[slot] + 1) & 0xff;
                int token = (gen << SLOT_BITS) | slot;
                OWNERS.set(slot, owner.apply(token));
                return token;
            }
        }
        throw new IllegalStateException("more than " + SLOTS + " queue pairs and SRQs open at once");
    }

    static void unregister(int token) {
        OWNERS.compareAndSet(token & (SLOTS - 1), OWNERS.get(token & (SLOTS - 1)), null);
    }

    static long encode(int token, boolean recv, long seq) {
        return ((long) token << 40) | (recv ? 1L << 39 : 0) | (seq & SEQ_MASK);
    }

    /** The live owner of a native wr_id, or null if it is gone (a stale completion). */
    static Owner owner(long wrId) {
        int token = (int) (wrId >>> 40);
        Owner o = OWNERS.get(token & (SLOTS - 1));
        return o != null && o.token() == token ? o : null;
    }

    static boolean isRecv(long wrId) {
        return (wrId & (1L << 39)) != 0;
    }

    static long seq(long wrId) {
        return wrId & SEQ_MASK;
    }
}
