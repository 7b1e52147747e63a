package dev.rdma4j;

/**
 * Where a work queue keeps its outstanding requests: the in-order {@link WorkRing} of a queue pair's
 * send and receive queues, or the any-order {@link SlotTable} of a shared receive queue.
 */
interface Slots {
    /** Free slots. */
    int free();

    /** Takes a slot for a request; returns its sequence (the low 39 bits of rdma4j's wr_id). */
    long claim(long userWrId, MemoryRegion buffer, long bufferOffset);

    /** The request {@code seq} holds {@code r} until it completes. */
    void pin(long seq, NativeResource r);

    /** The request {@code seq} was not posted after all; called for the newest claims first. */
    void unclaim(long seq);
}
