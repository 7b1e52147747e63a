package dev.rdma4j.engine;

import dev.rdma4j.QueuePair;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.access.Access;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * How the requests an {@link AsyncQueuePair} posted end: completed (a future completed, or the tagged request's
 * {@link RequestHandler} told), failed before or after posting, or discarded with the queue pair (reset, closed, its
 * CQ broken). Each request ends once: {@link PendingRequests#take} hands it to exactly one of these paths, which gives
 * its queue room back.
 *
 * <p>Threading: {@link #complete} runs on the engine thread (or on a caller's that polls in its place: the engine
 * serialises them); the failures on any thread.
 */
final class RequestOutcomes {
    private static final Access ACCESS = Access.get();

    private final CompletionEngine engine;
    private final QueuePair qp;
    private final PendingRequests pending;
    /** Takes the tagged requests' completions; null when the wrapper was made without one. */
    private final RequestHandler handler;
    private volatile Throwable broken;

    RequestOutcomes(CompletionEngine engine, QueuePair qp, PendingRequests pending, RequestHandler handler) {
        this.engine = engine;
        this.qp = qp;
        this.pending = pending;
        this.handler = handler;
    }

    /** Why the QP's CQ broke, or null. */
    Throwable broken() {
        return broken;
    }

    CompletableFuture<WorkCompletion> noSlot(CompletableFuture<WorkCompletion> f, Semaphore room) {
        room.release();
        f.completeExceptionally(new IllegalStateException("no free request slot on " + qp));
        return f;
    }

    void fail(long id, Throwable t) {
        PendingRequests.Pending p = pending.take(id);
        if (p != null) {
            p.room().release(p.permits());
            p.future().completeExceptionally(t);
        }
    }

    /** Engine thread: completion {@code i} of {@code wcs} belongs to this QP's request {@code wrId}. */
    boolean complete(long wrId, WorkCompletions wcs, int i) {
        long tag = handler != null ? pending.tag(wrId) : 0; // before take frees the slot
        PendingRequests.Pending p = pending.take(wrId);
        if (p == null) {
            return false;
        }
        if (p.future == null) { // tagged
            p.room().release();
            ACCESS.clearWrId(wcs, i);
            try {
                handler.onCompletion(tag, wcs, i);
            } catch (RuntimeException e) {
                engine.callbackFailed("the request handler of " + qp, e);
            }
            return true;
        }
        int index = PendingRequests.index(wrId);
        if (index < p.last) { // an earlier request of a chain: it reports only an error
            if (!wcs.isSuccess(i)) {
                p.future().completeExceptionally(new WorkRequestException(p.what() + ", request " + index,
                        completionOf(wcs, i)));
            }
            return true;
        }
        p.room().release(p.permits());
        WorkCompletion c = completionOf(wcs, i);
        if (c.isSuccess()) {
            p.future().complete(c);
        } else {
            p.future().completeExceptionally(new WorkRequestException(p.what(), c));
        }
        return true;
    }

    /** The caller gave no wr_id: the completion it sees carries 0, not rdma4j's internal request token. */
    private static WorkCompletion completionOf(WorkCompletions wcs, int i) {
        ACCESS.clearWrId(wcs, i);
        return wcs.get(i);
    }

    void failPending(String reason) {
        failPending(reason, null);
    }

    void failPending(String reason, Throwable cause) {
        for (PendingRequests.Taken t : pending.takeAll()) {
            PendingRequests.Pending p = t.pending();
            p.room().release(p.permits());
            WorkRequestException e = new WorkRequestException(p.what(), reason);
            if (cause != null) {
                e.initCause(cause);
            }
            if (p.future() != null) {
                p.future().completeExceptionally(e);
                continue;
            }
            try {
                handler.onFailure(t.tag(), e);
            } catch (RuntimeException x) {
                engine.callbackFailed("the request handler of " + qp, x);
            }
        }
    }

    /** Engine thread: the QP's CQ broke; nothing posted on it will complete, now or later. */
    void fail(Throwable cause) {
        broken = cause;
        failPending("its completion queue failed: " + cause.getMessage(), cause);
    }

    /** After a post: the engine closed or the CQ failed meanwhile, and the sweep of pending requests may have missed it. */
    void sweepIfEnded() {
        Throwable b = broken;
        if (engine.isClosed() || b != null) {
            failPending(engine.isClosed() ? "completion engine closed" : "its completion queue failed", b);
        }
    }
}
