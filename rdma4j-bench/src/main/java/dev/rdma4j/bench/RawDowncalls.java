package dev.rdma4j.bench;

import dev.rdma4j.QueuePair;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.WcView;
import java.lang.foreign.MemorySegment;

/**
 * The floor benchmarks' bare path: the two downcalls rdma4j makes ({@code ibv_post_send} and {@code ibv_poll_cq}
 * through {@code context->ops}, {@code DataPath}) on a request encoded once, with none of rdma4j's book-keeping.
 * Benchmark code only, on the class path; not thread-safe per queue pair.
 */
final class RawDowncalls {
    private RawDowncalls() {
    }

    /** The {@code struct ibv_qp *} of {@code qp}, which the API does not expose. */
    static long qpAddress(QueuePair qp) {
        return Internals.handle(qp).address();
    }

    /**
     * Posts {@code wr} ({@code ibv_post_send}) and spins on {@code ibv_poll_cq} until its completion.
     *
     * @return the completions polled
     * @throws IllegalStateException with the verb and errno, or the completion's status, on a failure
     */
    static int postAndAwait(MemorySegment postFn, long qp, MemorySegment wr, long badWr, MemorySegment pollFn,
            long cq, MemorySegment wc) {
        int rc = DataPath.post(postFn, qp, wr, badWr);
        if (rc != 0) {
            throw new IllegalStateException("ibv_post_send: errno " + rc);
        }
        int n;
        while ((n = DataPath.pollCq(pollFn, cq, 4, wc)) == 0) {
            Thread.onSpinWait();
        }
        if (n < 0 || WcView.status(wc, 0) != 0) {
            throw new IllegalStateException("ibv_poll_cq: " + n + ", status " + WcView.status(wc, 0));
        }
        return n;
    }
}
