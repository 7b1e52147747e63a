package dev.rdma4j;

import java.lang.invoke.VarHandle;

/**
 * Book-keeping of one work queue's outstanding requests, in posting order: the caller's wr_id and
 * the regions (and address handles) each request pins until it completes. Preallocated; posting and
 * completing allocate nothing.
 *
 * <p>One producer at a time (posts hold the queue's lock) and one consumer at a time (the CQ's poll
 * lock). Completions of a queue arrive in posting order, and a completion also retires the
 * unsignaled requests posted before it, as the verbs specify for send queues.
 */
final class WorkRing implements Slots {
    private final int capacity;
    /**
     * The arrays hold a power of two of slots, at least {@code capacity}, so that a sequence's slot is a mask
     * away ({@code Long.remainderUnsigned} by any capacity was a 64-bit division per index, several a request).
     */
    private final int mask;
    private final int refsPerSlot;
    private final long[] userWrIds;
    private final NativeResource[] refs;
    private final int[] refCounts;
    private final MemoryRegion[] bufferRegions;
    private final long[] bufferOffsets;
    /** This queue's stripe of the pin counts of the regions its requests use. */
    private final int stripe = NativeResource.pinStripe();
    private long head;
    private volatile long tail;

    WorkRing(int capacity, int refsPerSlot) {
        this.capacity = Math.max(1, capacity);
        if (this.capacity > 1 << 30) {
            throw new IllegalArgumentException("a work queue of more than 2^30 requests: " + capacity);
        }
        int slots = this.capacity == 1 ? 1 : Integer.highestOneBit(this.capacity - 1) << 1;
        this.mask = slots - 1;
        this.refsPerSlot = refsPerSlot;
        this.userWrIds = new long[slots];
        this.refs = new NativeResource[slots * refsPerSlot];
        this.refCounts = new int[slots];
        this.bufferRegions = new MemoryRegion[slots];
        this.bufferOffsets = new long[slots];
    }

    @Override
    public int free() {
        return capacity - (int) (head - tail);
    }

    long head() {
        return head;
    }

    /** Producer: takes the next slot for a request. */
    @Override
    public long claim(long userWrId, MemoryRegion region, long offset) {
        long seq = head++;
        int i = index(seq);
        userWrIds[i] = userWrId;
        bufferRegions[i] = region;
        bufferOffsets[i] = offset;
        refCounts[i] = 0;
        return seq;
    }

    /** Producer: the request {@code seq} pins {@code r} until it completes. */
    @Override
    public void pin(long seq, NativeResource r) {
        int i = index(seq);
        if (refCounts[i] == refsPerSlot) {
            throw new IllegalStateException("too many resources in one work request");
        }
        r.pin(stripe);
        refs[i * refsPerSlot + refCounts[i]++] = r;
    }

    /** Producer: the newest claim was not posted after all (a ring unclaims from its head). */
    @Override
    public void unclaim(long seq39) {
        long seq = head - 1;
        releaseSlot(index(seq));
        head = seq;
    }

    /** Producer: make slot contents visible to the consumer before the device can complete them. */
    static void publish() {
        VarHandle.releaseFence();
    }

    /**
     * Consumer: request {@code seq39} (the low 39 bits of its sequence) completed; retires it and
     * every earlier request still outstanding.
     *
     * @return the caller's wr_id of that request
     */
    long complete(long seq39, WorkCompletions wcs, int wcIndex) {
        VarHandle.acquireFence();
        long t = tail;
        long seq = t + ((seq39 - t) & WorkRequestIds.SEQ_MASK);
        long userWrId = userWrIds[index(seq)];
        if (wcs != null) {
            wcs.buffer(wcIndex, bufferRegions[index(seq)], bufferOffsets[index(seq)]);
        }
        while (t <= seq) {
            releaseSlot(index(t));
            t++;
        }
        tail = t;
        return userWrId;
    }

    /** Consumer side, when the queue is destroyed: nothing outstanding will complete any more. */
    void releaseAll() {
        for (long s = tail; s < head; s++) {
            releaseSlot(index(s));
        }
        tail = head;
    }

    private void releaseSlot(int i) {
        int base = i * refsPerSlot;
        for (int k = 0; k < refCounts[i]; k++) {
            refs[base + k].unpin(stripe);
            refs[base + k] = null;
        }
        refCounts[i] = 0;
        bufferRegions[i] = null;
    }

    private int index(long seq) {
        return (int) (seq & mask);
    }

    int outstanding() {
        return (int) (head - tail);
    }
}
