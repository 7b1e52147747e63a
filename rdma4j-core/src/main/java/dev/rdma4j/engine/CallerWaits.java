package dev.rdma4j.engine;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.ffi.Libc;
import java.lang.foreign.Arena;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * Callers that wait for a CQ's completions on their own threads and dispatch them there, instead of the engine's
 * thread handing each off: {@link CompletionEngine#pollWhileWaiting} (busy polling by the waiter) and
 * {@link CompletionEngine#blockWhileWaiting} (asleep on the queue's own completion channel, lent by the engine's
 * epoll set), and {@link #expect}, which gives a lent channel back to the engine when a future waits.
 *
 * <p>Threading: any caller's thread except the engine's. One caller at a time holds a queue's lock for a poll or an
 * arming (never while it sleeps); the engine only ever tries that lock. The hand-over with the engine's turn is by
 * the queue's volatile flags ({@link DrivenQueue#waiters}, {@link DrivenQueue#channelOut},
 * {@link DrivenQueue#blocking}, {@link DrivenQueue#expecting}) and a wake-up.
 */
final class CallerWaits {
    /** The longest sleep of a blocking waiter between looks at an interrupt or a close (ms). */
    private static final int BLOCK_SLICE_MILLIS = 50;
    private static final Access ACCESS = Access.get();

    private final CompletionEngine engine;
    private final EngineTurn turn;
    private final Dispatcher dispatcher;
    /** Events that woke callers in {@link #blockWhileWaiting}. */
    private final LongAdder wakeUps = new LongAdder();
    /** Completions dispatched by waiting callers. */
    private final LongAdder dispatched = new LongAdder();

    CallerWaits(CompletionEngine engine, EngineTurn turn, Dispatcher dispatcher) {
        this.engine = engine;
        this.turn = turn;
        this.dispatcher = dispatcher;
    }

    long dispatched() {
        return dispatched.sum();
    }

    long wakeUps() {
        return wakeUps.sum();
    }

    private DrivenQueue driven(CompletionQueue cq) {
        DrivenQueue d = turn.home(cq);
        if (d == null) {
            throw new IllegalArgumentException(cq + " is not driven by this engine");
        }
        return d;
    }

    private static boolean isDone(Future<?> f, BooleanSupplier done) {
        return f != null ? f.isDone() : done.getAsBoolean();
    }

    /** {@link CompletionEngine#pollWhileWaiting}: until {@code f} is done, or else {@code done} says so. */
    boolean pollWhileWaiting(CompletionQueue cq, Future<?> f, BooleanSupplier done, long timeoutNanos)
            throws InterruptedException {
        DrivenQueue d = driven(cq);
        if (d.handler != null) {
            throw new IllegalArgumentException(cq + "'s completions go to a CompletionHandler, in place on the engine"
                    + " thread: no other thread may poll it");
        }
        engine.refuseBlockingOnEngineThread("CompletionEngine.pollWhileWaiting");
        if (Thread.currentThread().isVirtual()) {
            return false; // spinning would hold its carrier (and yielding between looks stalled a ping-pong in one
                          // of two runs on one carrier): the caller parks the usual way, the engine's thread dispatches
        }
        long start = System.nanoTime();
        d.waiters.incrementAndGet();
        boolean polling = true;
        try {
            while (!isDone(f, done)) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (!turn.running() || !polling) {
                    return false;
                }
                if (d.lock.tryLock()) {
                    try {
                        polling = pollAsCaller(d) >= 0;
                    } finally {
                        d.lock.unlock();
                    }
                }
                if (!isDone(f, done)) {
                    if (System.nanoTime() - start >= timeoutNanos) {
                        return false;
                    }
                    Thread.onSpinWait();
                }
            }
            return true;
        } finally {
            if (d.waiters.decrementAndGet() == 0) {
                d.lastLeft = DrivenQueue.JUST_LEFT; // the engine stamps it at its next look and arms it a bit later
            }
            if (d.cq.isClosed() || !turn.running()) {
                d.closeCallerBatch(); // the engine pruned it, or shut down, perhaps while this caller held the lock
            }
        }
    }

    /** One poll of {@code d} on this thread, its completions dispatched here (lock held); -1: cannot go on. */
    private int pollAsCaller(DrivenQueue d) {
        int n = dispatcher.pollAsCaller(d);
        if (n > 0) {
            dispatched.add(n);
        }
        return n;
    }

    /** {@link CompletionEngine#blockWhileWaiting(CompletionQueue, BooleanSupplier, long, boolean)}. */
    boolean blockWhileWaiting(CompletionQueue cq, BooleanSupplier done, long timeoutNanos, boolean solicitedOnly)
            throws InterruptedException {
        DrivenQueue d = driven(cq);
        engine.refuseBlockingOnEngineThread("CompletionEngine.blockWhileWaiting");
        if (Thread.currentThread().isVirtual() || d.own == null || turn.mode() != PollingMode.EVENT || d.busy || d.blocking.get()
                || !d.blocking.compareAndSet(false, true)) {
            return false;
        }
        long start = 0; // read at the first look that found nothing: a wait that ends at once reads no clock
        boolean timing = false;
        d.waiters.incrementAndGet();
        try {
            boolean readable = false;
            for (;;) {
                if (done.getAsBoolean()) {
                    return true;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (!turn.running()) {
                    return false;
                }
                int n = blockerStep(d, readable, solicitedOnly);
                readable = false;
                if (n < 0) {
                    return false;
                }
                if (n > 0) {
                    continue; // dispatched something: done, perhaps
                }
                if (done.getAsBoolean()) {
                    return true;
                }
                long now = System.nanoTime();
                if (!timing) {
                    start = now;
                    timing = true;
                }
                long left = timeoutNanos - (now - start);
                if (left <= 0) {
                    return false;
                }
                int ms = (int) Math.min(BLOCK_SLICE_MILLIS, left / 1_000_000 + 1); // no overflow near Long.MAX_VALUE
                int rc;
                try {
                    rc = ACCESS.pollReadable(d.own, ms, d.pollfd);
                } catch (IllegalStateException closed) {
                    return false;
                }
                if (rc < 0 && -rc != Libc.EINTR) {
                    return false;
                }
                readable = rc > 0;
            }
        } finally {
            d.blocking.set(false);
            if (d.waiters.decrementAndGet() == 0) {
                d.lastLeft = DrivenQueue.JUST_LEFT;
            }
            if (d.expecting) { // read after blocking is cleared: an expect() that saw this caller asleep is seen here
                turn.wake(); // the engine takes the channel back now: a future waits for a completion
            }
            if (d.cq.isClosed() || !turn.running()) {
                d.closeCallerBatch();
            }
        }
    }

    /**
     * One step of a blocking waiter, the queue's lock held: borrow the channel (first time), read its event when
     * it was reported readable, arm the queue unless it is armed, then poll and dispatch, as C's event loops do
     * ({@code ibv_get_cq_event}, {@code ibv_req_notify_cq}, {@code ibv_poll_cq}): a completion that came before the
     * arming is polled, one after it raises an event. (Until 2026-11-30 it polled, armed when that found nothing
     * and polled again: a step that went to sleep had polled twice for nothing.)
     *
     * @return completions dispatched; 0: empty and armed, sleep; -1: waiting here cannot go on
     */
    private int blockerStep(DrivenQueue d, boolean readable, boolean solicitedOnly) {
        d.lock.lock(); // held by others only for a poll or a drain
        try {
            if (!d.channelOut && !borrow(d)) {
                return -1;
            }
            if (readable) {
                // one event, not a drain: the channel is this queue's alone, and an arm yields at most one event, so a
                // second is pending only when the queue was armed twice (the engine, then this caller); it keeps the
                // fd readable, and the next sleep reads it at once (poll(2) is level-triggered), or, once the engine
                // took the channel back, epoll_ctl's ADD reports it and the engine drains (its epoll is
                // edge-triggered: there every event must be read). A drain here asked poll(2) each wake-up for it.
                CompletionQueue q;
                try {
                    q = ACCESS.nextEvent(d.own, true); // lent by the engine: the driver's path
                } catch (IllegalStateException | VerbsException closedOrFailed) {
                    return -1;
                }
                if (q != null) {
                    d.armedByCaller = 0;
                    d.armedSolicited = false;
                    wakeUps.increment();
                    if (++d.eventsSinceAck >= EngineTurn.ACK_BATCH) {
                        q.acknowledgeEvents();
                        d.eventsSinceAck = 0;
                    }
                }
            }
            if (!armAsCaller(d, solicitedOnly)) {
                return -1; // the engine meets it too (broken, pruned)
            }
            for (;;) { // what completed before the arming too
                int n = pollAsCaller(d);
                // a full batch all dropped (destroyed queue pairs') is not an empty queue: what lies behind it came
                // before the arming, and no event would come for it (as the engine's drain; the CQ's size bounds it)
                if (n != 0 || d.callerWcs.emptied()) {
                    return n;
                }
            }
        } finally {
            d.lock.unlock();
        }
    }

    /**
     * Arms {@code d} unless a caller armed it as needed since the last event read (lock held): for solicited
     * completions only when the caller waits for a message and no future expects a completion, else for every one.
     * False: it cannot be armed (broken, closed).
     */
    private static boolean armAsCaller(DrivenQueue d, boolean solicitedOnly) {
        int want = 2;
        if (solicitedOnly && d.armedByCaller != 2) {
            d.armedSolicited = true; // then look at expecting: an expect() either is seen here or sees this
            if (!d.expecting) {
                want = 1;
            }
        }
        if (d.armedByCaller >= want) {
            return true;
        }
        try {
            d.cq.requestNotification(want == 1);
        } catch (VerbsException | IllegalStateException e) {
            return false;
        }
        d.armedByCaller = want;
        if (want == 2) {
            d.armedSolicited = false;
        }
        return true;
    }

    /**
     * Takes the queue's own channel out of the engine's epoll set for blocking waiters (lock held) and wakes the
     * engine, which from then on looks at the queue now and then and takes the channel back once they are gone.
     */
    private boolean borrow(DrivenQueue d) {
        if (d.pollfd == null) {
            Arena auto = Arena.ofAuto();
            d.pollfd = auto.allocate(Libc.POLLFD);
            d.ctlScratch = auto.allocate(Libc.EPOLL_EVENT);
        }
        if (!turn.enterFds()) {
            return false; // the engine is closing its fds
        }
        int rc;
        try {
            rc = ACCESS.epollCtl(d.own, turn.epfd(), Libc.EPOLL_CTL_DEL, d.ownId, d.ctlScratch);
        } catch (IllegalStateException closed) {
            return false;
        } finally {
            turn.exitFds();
        }
        if (rc < 0) {
            return false;
        }
        d.channelOut = true;
        d.armedByCaller = 0; // whatever the engine armed may have fired into the engine's hands already
        turn.wake();
        return true;
    }

    /**
     * {@link CompletionEngine#expect}: a future or a handler expects a completion of {@code d}'s; if its channel is
     * lent, the engine takes it back as soon as no caller sleeps on it. A volatile read when it is not lent.
     */
    void expect(DrivenQueue d) {
        if (d == null || !d.channelOut) {
            return;
        }
        d.expecting = true; // then look for a sleeper: it either is seen here or sees this as it leaves
        if (d.armedSolicited) { // a sleeper that only solicited completions would wake: every one wakes it now
            try {
                d.cq.requestNotification(false); // before the post: its completion comes after the arming
            } catch (VerbsException | IllegalStateException e) {
                // the queue is closing or broken: the engine and the sleeper meet it too
            }
        }
        if (!d.blocking.get()) {
            turn.wake(); // nobody sleeps on it: the engine takes it back now
        }
    }
}
