package dev.rdma4j.engine;

import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.EngineThreads;
import dev.rdma4j.internal.jfr.Flight;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a completion becomes: {@code ibv_poll_cq} on a driven queue and each completion handed to its owner (the
 * {@link AsyncQueuePair} the core recorded for the request, never found by the caller's wr_id), the queue's
 * {@link CompletionHandler} in place, or its fallback handler; the engine's record of the queue pairs it completes,
 * which fail together when their queue breaks or the engine ends; and the count of callbacks that threw (Agrona's
 * error handler: logged, counted, the engine goes on).
 *
 * <p>Threading: {@link #pollAndDispatch} on the engine's thread, {@link #pollAsCaller} on a waiting caller's, each
 * with the queue's lock held (one dispatcher of a queue at a time, in the order polled); the registry and the
 * counter are thread-safe.
 */
final class Dispatcher {
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.engine");
    private static final Access ACCESS = Access.get();

    private final String name;
    /** The engine thread's batch. */
    private final WorkCompletions wcs;
    private final List<AsyncQueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private final LongAdder callbackFailures = new LongAdder();
    /** Completions the engine's thread dispatched, and those of them that failed (its own fields). */
    private long completions;
    private long failedCompletions;
    /** The engine thread's polls (for tests: how many each event costs). */
    private long polls;
    /** Failed completions waiting callers dispatched (several may at once, each under its queue's lock; rare). */
    private final LongAdder failedByCallers = new LongAdder();
    /** What a {@link CompletionHandler} is given: one view, pointed at each completion in turn. */
    private CompletionView view;

    Dispatcher(String name, int pollBatch) {
        this.name = name;
        this.wcs = new WorkCompletions(pollBatch);
    }

    /** The engine's thread is known: completion handlers' views are bound to it. */
    void bind(Thread thread) {
        view = new CompletionView(thread);
    }

    String name() {
        return name;
    }

    void register(AsyncQueuePair a) {
        queuePairs.add(a);
    }

    void forget(AsyncQueuePair a) {
        queuePairs.remove(a);
    }

    /**
     * One {@code ibv_poll_cq} of {@code d} on the engine's thread (its lock held), each completion dispatched.
     *
     * @return the completions polled; 0 when empty; -1 when the queue closed meanwhile or broke (its futures failed)
     */
    int pollAndDispatch(DrivenQueue d) {
        int n;
        polls++;
        try {
            n = d.cq.poll(wcs);
        } catch (VerbsException e) {
            broken(d, e);
            return -1;
        } catch (IllegalStateException closedMeanwhile) {
            return -1; // pruned by the turn
        }
        if (n > 0) {
            completions += n;
            dispatch(d, n);
        }
        return n;
    }

    /**
     * Whether the engine thread's last {@link #pollAndDispatch} left its queue empty ({@link WorkCompletions#emptied}):
     * a drain whose poll kept nothing goes on when it was not (a full batch of dropped completions).
     */
    boolean lastPollEmptied() {
        return wcs.emptied();
    }

    /**
     * The {@code n} completions just polled, dispatched. A method of its own, called only when a poll found some:
     * a busy-polled queue's polls are nearly all empty, and C2 then saw the calls of a loop inside the poll's method
     * as rare and inlined none of them (PrintInlining: "low call site frequency"); compiled apart, this loop is its
     * own hot path ({@link dev.rdma4j.CompletionQueue}'s poll does the same).
     */
    private void dispatch(DrivenQueue d, int n) {
        for (int i = 0; i < n; i++) {
            if (!wcs.isSuccess(i)) {
                failedCompletions++;
                failed(wcs, i);
            }
            // routed by the queue pair the core recorded for the request, never by the caller's wr_id
            if (ACCESS.driver(wcs, i) instanceof AsyncQueuePair.Driver owner) {
                owner.outcomes().complete(wcs.wrId(i), wcs, i); // false: a request failed meanwhile (reset)
            } else if (d.handler != null) {
                deliverToHandler(d, i);
            } else if (d.fallback != null) {
                deliverToFallback(d, i);
            }
        }
    }

    /**
     * One poll of {@code d} on a waiting caller's thread (the queue's lock held), its completions dispatched there,
     * where their continuations run as on the engine's thread (marked so: they must not block).
     *
     * @return the completions dispatched, or -1 if the queue cannot be polled (closed, broken, engine closing)
     */
    int pollAsCaller(DrivenQueue d) {
        WorkCompletions w = d.callerWcs;
        int n;
        try {
            if (w == null) {
                w = d.callerWcs = new WorkCompletions(wcs.capacity());
            }
            n = ACCESS.pollForDriver(d.cq, w);
        } catch (VerbsException | IllegalStateException e) {
            return -1; // the engine meets it too, and deals with it (broken, pruned)
        }
        if (n > 0) {
            dispatchAsCaller(d, w, n);
        }
        return n;
    }

    /** {@link #pollAsCaller}'s completions, dispatched: a method of its own for the reason {@link #dispatch} gives. */
    private void dispatchAsCaller(DrivenQueue d, WorkCompletions w, int n) {
        String engineThread = EngineThreads.markCurrent(name); // continuations must not block
        try {
            for (int i = 0; i < n; i++) {
                if (!w.isSuccess(i)) {
                    failedByCallers.increment();
                    failed(w, i);
                }
                if (ACCESS.driver(w, i) instanceof AsyncQueuePair.Driver owner) {
                    owner.outcomes().complete(w.wrId(i), w, i);
                } else if (d.fallback != null) {
                    try {
                        d.fallback.accept(w.get(i));
                    } catch (RuntimeException e) {
                        callbackFailed("the fallback completion handler of " + d.cq, e);
                    }
                }
            }
        } finally {
            EngineThreads.markCurrent(engineThread);
        }
    }

    /** Completion {@code i} failed: a JFR event when a recording asks for it (before its owner sees it). */
    private void failed(WorkCompletions w, int i) {
        if (Flight.on) {
            WorkCompletion c = w.get(i);
            Flight.failedCompletion(name, c.status().name(), w.isReceive(i) ? "RECV" : c.opcode().name(),
                    c.qpNumber(), c.vendorError(), c.status() == WcStatus.WR_FLUSH_ERR);
        }
    }

    /** Completions the engine's thread dispatched (read racily from other threads: a snapshot may lag). */
    long completions() {
        return completions;
    }

    long polls() {
        return polls;
    }

    /** Completions dispatched on any thread whose status was not {@code IBV_WC_SUCCESS}. */
    long failedCompletions() {
        return failedCompletions + failedByCallers.sum();
    }

    /**
     * {@code ibv_poll_cq} failed (a broken CQ, e.g. after a fatal device error): its completions will never
     * come, so the futures of every queue pair on it fail now with that error, and later posts on them too.
     */
    void broken(DrivenQueue d, VerbsException e) {
        if (d.broken) {
            return;
        }
        d.broken = true;
        LOG.log(System.Logger.Level.ERROR, "the engine stops driving " + d.cq + ": " + e.getMessage(), e);
        for (AsyncQueuePair a : queuePairs) {
            dev.rdma4j.QueuePair qp = a.queuePair();
            if (qp.sendCompletionQueue() == d.cq || qp.receiveCompletionQueue() == d.cq) {
                a.outcomes.fail(e);
            }
        }
    }

    private void deliverToHandler(DrivenQueue d, int i) {
        view.at(wcs, i);
        try {
            d.handler.onCompletion(view);
        } catch (RuntimeException e) {
            callbackFailed("the completion handler of " + d.cq, e);
        } finally {
            view.release();
        }
    }

    private void deliverToFallback(DrivenQueue d, int i) {
        try {
            d.fallback.accept(wcs.get(i));
        } catch (RuntimeException e) {
            callbackFailed("the fallback completion handler of " + d.cq, e);
        }
    }

    /** Fails the pending futures of every queue pair: the engine closed or died. */
    void failAll(String reason, Throwable cause) {
        for (AsyncQueuePair a : queuePairs) {
            a.outcomes.failPending(reason, cause);
        }
    }

    long callbackFailures() {
        return callbackFailures.sum();
    }

    /** A callback threw: logged and counted; the engine goes on. Any thread. */
    void callbackFailed(String what, RuntimeException e) {
        callbackFailures.increment();
        LOG.log(System.Logger.Level.WARNING, what + " threw on engine thread " + name
                + "; the engine goes on", e);
    }

    /** Frees the engine's batch (the engine has shut down). */
    void close() {
        wcs.close();
    }
}
