package dev.rdma4j;

/**
 * The words of a refused {@code ibv_post_send}: which request, and why, from the queue pair's limits and state, for
 * the {@link VerbsException}. Off the hot path: only a refused post asks.
 *
 * <p>Threading: stateless; called by the thread that posted.
 */
final class SendRefusals {
    private SendRefusals() {
    }

    /** The refusal of an atomic write by {@code ibv_post_send}; {@link QueuePairEx} posts it. */
    static final String ATOMIC_WRITE_NEEDS_WR_API = "an atomic write goes through the extended API (QueuePairEx.post,"
            + " ibv_wr_atomic_write), not ibv_post_send";

    /**
     * Why a post of this batch was refused with {@code rc}, for the exception: the request, and the reason the queue
     * pair's limits or state give (else the provider's).
     */
    static String explain(SendBatch b, int rc, QpCapabilities caps, QpState state, QpType type) {
        int i = Math.max(0, b.failedIndex);
        String why;
        if (rc == dev.rdma4j.internal.ffi.Libc.ENOMEM) {
            why = "send queue full (" + caps.maxSendWr() + " outstanding; signal some requests and poll)";
        } else if (state != QpState.RTS && state != QpState.SQD && state != QpState.SQE && state != QpState.ERROR) {
            why = "the QP is in " + state + ", sends need RTS";
        } else if (b.refusalFor(type, i) != null) {
            why = b.refusalFor(type, i);
        } else if (b.sgeCounts[i] > caps.maxSendSge()) {
            why = "it has " + b.sgeCounts[i] + " scatter/gather entries, the QP allows " + caps.maxSendSge();
        } else if (b.isInline(i) && b.bytes[i] > caps.maxInlineData()) {
            why = "it has " + b.bytes[i] + " inline bytes, the QP allows " + caps.maxInlineData();
        } else if (b.windowOps != 0 && b.extras.refusedInvalidate(i)) {
            why = "it invalidates " + b.extras.window(i) + ", which is not bound on this queue pair (bound by no bind"
                    + " posted here since its last reset, or invalidated already; see MemoryWindow)";
        } else {
            why = "refused by the provider";
        }
        return "request " + i + " of " + b.count + ": " + why;
    }
}
