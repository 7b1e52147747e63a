package dev.rdma4j.engine;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.SendBatch;

/**
 * Writes one request into an {@link AsyncQueuePair}'s batch (the wr_id is rdma4j's).
 *
 * <p>Threading: called under the wrapper's send lock.
 */
@FunctionalInterface
interface RequestEncoder {
    void encode(SendBatch batch, long wrId);

    /** An inline request's check: {@code data} fits the QP's {@code max_inline_data}. */
    static void checkInline(dev.rdma4j.QueuePair qp, java.lang.foreign.MemorySegment data) {
        int max = qp.capabilities().maxInlineData();
        if (data.byteSize() > max) {
            throw new IllegalArgumentException(data.byteSize() + " bytes cannot go inline on " + qp + ", which takes"
                    + " at most " + max + " (QueuePairBuilder.maxInlineData)");
        }
    }

    /**
     * A plain send's encoder: a class, not a lambda, as is every object made per request on the paths of
     * {@link AsyncQueuePair#sendAsync(MemoryRegion, long, int)} and {@link AsyncQueuePair#receiveAsync}: under C1
     * (the guest's compiler, or a JVM run with {@code -XX:TieredStopAtLevel=1}) a capturing lambda is made through a
     * method handle and a runtime call (~10 times a {@code new}; C2 makes it a {@code new}).
     */
    record Send(MemoryRegion region, long offset, int length) implements RequestEncoder {
        @Override
        public void encode(SendBatch batch, long wrId) {
            batch.send(wrId, region, offset, length);
        }
    }
}
