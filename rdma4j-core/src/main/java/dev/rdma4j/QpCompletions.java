package dev.rdma4j;

import dev.rdma4j.internal.QpDriver;

/**
 * Takes a {@link QueuePair}'s completions from {@link CompletionQueue#poll} (kept off the public API: the wr_ids are
 * rdma4j's) and knows the QP's driver, the {@code AsyncQueuePair} that owns its wr_ids when one does
 * ({@code Access.drive}): the public posts are refused then, and the engine finds the driver beside each completion.
 *
 * <p>Threading: {@link #complete} runs on the polling thread under the CQ's poll lock; {@link #drive} under the
 * queue pair's monitor; the driver is read on any thread.
 */
final class QpCompletions implements WorkRequestIds.Owner {
    private final QueuePair qp;
    private volatile QpDriver driver;

    QpCompletions(QueuePair qp) {
        this.qp = qp;
    }

    @Override
    public long complete(boolean recv, long seq, WorkCompletions wcs, int i) {
        return recv ? qp.recvRing.complete(seq, wcs, i) : qp.sendRing.complete(seq, null, 0);
    }

    @Override
    public int token() {
        return qp.token;
    }

    @Override
    public QpDriver driver() {
        return driver;
    }

    /** Makes {@code d} the QP's only poster; see {@code Access.drive}. */
    void drive(QpDriver d) {
        if (driver != null) {
            throw new IllegalStateException(qp + " is already driven by an AsyncQueuePair");
        }
        driver = java.util.Objects.requireNonNull(d);
    }

    /** A public post on a driven QP: refused. */
    void refuseIfDriven() {
        if (driver != null) {
            throw new IllegalStateException(qp + " is driven by an AsyncQueuePair, which owns its wr_ids and"
                    + " completions: post through the AsyncQueuePair");
        }
    }
}
