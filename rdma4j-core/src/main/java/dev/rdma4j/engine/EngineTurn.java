package dev.rdma4j.engine;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.ffi.Libc;
import dev.rdma4j.internal.jfr.Flight;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * One pass of a {@link CompletionEngine}'s loop and everything it looks at (Netty's {@code IoHandler}): the epoll
 * set, the wake-up eventfd, the watched fds, the completion channels and the CQs it arms, drains and acknowledges,
 and when it dispatches their completions ({@link Dispatcher}). {@link #turn(int)} is the pass; {@link #wake()} interrupts its wait; the
 * polling modes are its three ways of waiting ({@link #eventTurn}, {@link #pollTurn}). It owns no thread and no
 * task queue: an {@link EngineRunner} calls the turns on the engine's thread and gives it the tasks to run between
 * the fds and the CQs ({@link Tasks}).
 *
 * <p>Threading: the turn, the registration methods and the shut-down run on the engine's thread only; {@link #wake},
 * {@link #enterFds()}, {@link #home}, {@link #running()} and the counters may be called from any thread. The
 * discipline of event mode is the engine's (see {@link CompletionEngine}): {@code ibv_req_notify_cq}, then drain
 * until a poll empties the CQ; events acknowledged in batches; a queue lent to waiting callers is left unarmed to them
 * ({@link CallerWaits}) and taken back after they have left.
 */
final class EngineTurn {
    /** The eventfd's key in the epoll set. */
    private static final long WAKE = 0;
    /** Completion events acknowledged at once ({@code ibv_ack_cq_events}). */
    static final int ACK_BATCH = 16;
    /** Polls of one CQ per turn before the others, the tasks and the fds get theirs (no starvation). */
    private static final int DRAIN_BUDGET = 16;
    /** The longest {@link #waitedPeriod} (ms): how late, at most, the engine takes back a CQ its waiters left. */
    static final int MAX_WAITED_PERIOD = 8;
    /**
     * How long after its last waiter left a CQ stays with the waiters, unarmed: a caller that polls while it waits
     * usually comes back sooner (the next receive of a ping-pong), and arming it at every leave would make its
     * next completion interrupt and wake the engine thread for nothing.
     */
    static final long WAITER_GRACE_NANOS = 1_000_000;
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.engine");
    private static final Access ACCESS = Access.get();

    /** The tasks the turn runs after the fds' events and before the CQs (the runner's queue). */
    interface Tasks {
        int runTasks(); // runs the queued tasks; returns how many ran

        boolean hasTasks(); // whether a task is queued
    }

    private final PollingMode mode;
    private final IdleStrategy idle;
    private final Tasks tasks;
    private final int epfd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment epollScratch = arena.allocate(Libc.EPOLL_EVENT);
    private final WakeUp wakeUp;
    /** The CQs this engine drains (any thread reads it: wrap checks a QP's CQs against it, waiters find theirs). */
    private final Map<CompletionQueue, DrivenQueue> drivenCqs = new ConcurrentHashMap<>();
    private volatile boolean running = true;

    // engine thread only
    private final List<DrivenQueue> driven = new ArrayList<>();
    private final Map<Long, Object> sources = new HashMap<>();
    private long nextSource = 1;
    private final Dispatcher dispatcher;
    private final MemorySegment events;
    private final int maxEvents = 64;
    private int work; // completions dispatched in this turn (poll modes: whether to idle)
    /** Driven CQs with {@link DrivenQueue#busy} (event mode: the turn never waits while there are any). */
    private int busyCqs;
    /** Driven CQs with {@link DrivenQueue#waitersRecently}: the turn waits at most {@link #waitedPeriod} then. */
    private int waitedCqs;
    /**
     * The longest wait while CQs are left to their waiters (ms): 1 at first, doubled after each wait that found nothing
     * to do, up to {@link #MAX_WAITED_PERIOD}. Each look wakes the engine's thread, which in a busy ping-pong takes a
     * core from a polling caller (looking every millisecond cost a wake-up a round trip in the guest).
     */
    private int waitedPeriod = 1;
    private long turnsDone; // turns completed (for tests)
    private long waiterLooks; // waits for waiters that timed out: the engine's wake-ups while CQs are left to callers
    /** A CQ was left non-empty by its budget (event mode): look at the fds without waiting next turn. */
    private boolean backlog;
    private long rounds; // turns of the poll modes (epoll is looked at every 64th)
    private final Predicate<DrivenQueue> dead = this::forgetIfDead; // pruneDead()'s test

    /**
     * Opens the epoll set and the wake-up eventfd ({@code epoll_create1}, {@code eventfd}, {@code epoll_ctl}).
     *
     * @throws VerbsException naming the call that failed
     */
    EngineTurn(PollingMode mode, IdleStrategy idle, Dispatcher dispatcher, Tasks tasks) throws VerbsException {
        this.mode = mode;
        this.idle = idle;
        this.dispatcher = dispatcher;
        this.tasks = tasks;
        this.events = arena.allocate(Libc.EPOLL_EVENT.byteSize() * maxEvents, 8);
        dev.rdma4j.Rdma.ensureAvailable();
        int ep = Libc.epollCreate();
        if (ep < 0) {
            arena.close();
            throw VerbsException.of("epoll_create1", -ep, null);
        }
        try {
            this.wakeUp = new WakeUp(arena);
        } catch (VerbsException e) {
            Libc.close(ep);
            arena.close();
            throw e;
        }
        this.epfd = ep;
        int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, wakeUp.fd, Libc.EPOLLIN | Libc.EPOLLET, WAKE, epollScratch);
        if (rc < 0) {
            closeFdsNow();
            throw VerbsException.of("epoll_ctl", -rc, "eventfd");
        }
    }

    /** The engine's thread is known: completion handlers' views are bound to it. */
    void bind(Thread thread) {
        dispatcher.bind(thread);
    }

    PollingMode mode() {
        return mode;
    }

    int epfd() {
        return epfd;
    }

    /** Whether the turns go on (false once the engine closes or dies). Any thread. */
    boolean running() {
        return running;
    }

    /** No more turns: the runner finishes with {@link #closeQueues()} and {@link #closeFds()}. Any thread. */
    void stop() {
        running = false;
    }

    // ---------------------------------------------------------------- the registry (engine thread)

    /** Registers a queue (its own channel, when it has one, in the epoll set) and arms it in event mode. */
    void addQueue(DrivenQueue d) {
        if (d.own != null) {
            long id = nextSource++;
            int rc = ACCESS.epollCtl(d.own, epfd, Libc.EPOLL_CTL_ADD, id, epollScratch);
            if (rc < 0) {
                throw new IllegalStateException(VerbsException.of("epoll_ctl", -rc, "completion channel").getMessage());
            }
            d.ownId = id;
            sources.put(id, d);
        }
        driven.add(d);
        drivenCqs.put(d.cq, d);
        ACCESS.drive(d.cq, Thread.currentThread()); // polling it by hand would race the engine: refused from now on
        if (mode == PollingMode.EVENT) {
            armAndDrain(d);
        }
    }

    /**
     * Puts a context's shared completion channel into the epoll set, level-triggered, forgetting a {@code stale} one
     * (or null): each report is read once ({@link #takeChannelEvent}), and an event still pending after that read
     * is reported again by the next {@code epoll_wait}, so no read has to find the channel empty.
     */
    void addChannel(CompletionChannel created, CompletionChannel stale) {
        if (stale != null) {
            sources.values().remove(stale);
        }
        long id = nextSource++;
        sources.put(id, created);
        int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, created.fd(), Libc.EPOLLIN, id, epollScratch);
        if (rc < 0) {
            sources.remove(id);
            throw new IllegalStateException(VerbsException.of("epoll_ctl", -rc, "channel").getMessage());
        }
    }

    /** Watches {@code fd} edge-triggered and runs {@code onReadable} once now (what is already pending). */
    void addWatch(int fd, Runnable onReadable) {
        long id = nextSource++;
        sources.put(id, new Watched(fd, onReadable));
        int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, fd, Libc.EPOLLIN | Libc.EPOLLET, id, epollScratch);
        if (rc < 0) {
            sources.remove(id);
            throw new IllegalStateException(VerbsException.of("epoll_ctl", -rc, "fd " + fd).getMessage());
        }
        runWatched(id, onReadable);
    }

    private record Watched(int fd, Runnable onReadable) { } // a watched fd and its handler

    private void runWatched(long id, Runnable r) {
        try {
            r.run();
        } catch (IllegalStateException closed) {
            Object w = sources.remove(id);
            if (w instanceof Watched watched) {
                Libc.epollCtl(epfd, Libc.EPOLL_CTL_DEL, watched.fd(), 0, 0, epollScratch);
            }
        } catch (RuntimeException e) {
            callbackFailed("the handler of a watched fd", e);
        }
    }

    /** The engine's record of {@code cq}; null if it does not drive it. Any thread. */
    DrivenQueue home(CompletionQueue cq) {
        return drivenCqs.get(cq);
    }

    /** {@link CompletionEngine#busyPoll}'s work: false if this engine does not drive {@code cq}. */
    boolean busyPoll(CompletionQueue cq, boolean on) {
        for (DrivenQueue d : driven) {
            if (d.cq == cq) {
                if (d.busy != on) {
                    d.busy = on;
                    busyCqs += on ? 1 : -1;
                }
                return true;
            }
        }
        return false;
    }

    /** For tests: what the engine does when {@code ibv_poll_cq} fails on {@code cq}. */
    void simulatePollFailure(CompletionQueue cq, VerbsException e) {
        for (DrivenQueue d : driven) {
            if (d.cq == cq) {
                dispatcher.broken(d, e);
            }
        }
        pruneDead();
    }

    long turnsDone() {
        return turnsDone;
    }

    long waiterLooks() {
        return waiterLooks;
    }

    long polls() {
        return dispatcher.polls();
    }

    // ---------------------------------------------------------------- wake-ups and the fds (any thread)

    /** Wakes the engine's thread (coalesced; see {@link WakeUp}). Any thread. */
    void wake() {
        wakeUp.wake();
    }

    /** Eventfd writes so far (wake-ups are coalesced: fewer than the tasks submitted). For tests. */
    long wakeWrites() {
        return wakeUp.writes();
    }

    /** Counts a use of the engine's fds by another thread: false once they are closing. Any thread. */
    boolean enterFds() {
        return wakeUp.enter();
    }

    /** Ends a use begun by {@link #enterFds()}. */
    void exitFds() {
        wakeUp.exit();
    }

    /** A callback threw: logged and counted; the engine goes on. Any thread. */
    void callbackFailed(String what, RuntimeException e) {
        dispatcher.callbackFailed(what, e);
    }

    // ---------------------------------------------------------------- the turn (engine thread)

    /**
     * One pass of the engine's loop (its own thread's, or an external loop's {@link CompletionEngine#runOnce}).
     *
     * @param timeoutMillis the longest wait in epoll: -1 (the own thread: until an fd or a wake-up) or more
     * @return the work done: completions, fd events, tasks
     */
    int turn(int timeoutMillis) {
        return switch (mode) {
            case EVENT -> eventTurn(timeoutMillis);
            case BUSY_POLL -> pollTurn(false, timeoutMillis);
            case ADAPTIVE -> pollTurn(true, timeoutMillis);
        };
    }

    private int eventTurn(int timeoutMillis) {
        work = 0;
        boolean forWaiters = !backlog && busyCqs == 0 && waitedCqs > 0;
        int n = Libc.epollWait(epfd, events, maxEvents, backlog || busyCqs > 0 ? 0
                : forWaiters ? atMostWaitedPeriod(timeoutMillis) : timeoutMillis);
        if (n < 0) {
            if (-n == Libc.EINTR) {
                return 0;
            }
            throw new IllegalStateException(VerbsException.of("epoll_wait", -n, null).getMessage());
        }
        Object watched = Flight.on ? Flight.turnStarted() : null; // a JFR recording times the work, not the wait
        handleEvents(n);
        work += n + tasks.runTasks();
        backlog = false;
        for (int i = 0; i < driven.size() && running; i++) {
            DrivenQueue d = driven.get(i);
            if (d.expecting && d.waiters.get() == 0) {
                d.ready = false;
                d.lastLeft = 0; // a future waits: take the channel back now, not a millisecond after the last waiter
                if (!armAndDrain(d)) {
                    d.ready = true;
                    backlog = true;
                }
            } else if (d.ready) {
                d.ready = false;
                if (!armAndDrain(d)) {
                    d.ready = true; // budget spent: more next turn, after the others
                    backlog = true;
                }
            } else if (d.busy) {
                drain(d); // no event needed: its completions are taken as soon as they are there
            } else if (d.waitersRecently || d.channelOut) {
                if (!armAndDrain(d)) { // the waiters have been gone a millisecond: armed again, or next turn
                    d.ready = true;
                    backlog = true;
                } else if (d.waitersRecently && d.waiters.get() == 0) {
                    drain(d); // what completed since the last waiter left (e.g. the acknowledgement of a send)
                }
            }
        }
        pruneDead();
        nextWaitedPeriod(forWaiters && n == 0);
        turnsDone++;
        if (watched != null) {
            Flight.turnEnded(watched, dispatcher.name(), work);
        }
        return work;
    }

    private int atMostWaitedPeriod(int timeoutMillis) {
        return timeoutMillis < 0 || timeoutMillis > waitedPeriod ? waitedPeriod : timeoutMillis;
    }

    /**
     * After a turn: back to 1 ms once no CQ is left to waiters; doubled after a wait that timed out with CQs still
     * left to them (the waiters came back meanwhile: the look was for nothing but leftovers they would take too).
     */
    private void nextWaitedPeriod(boolean lookedForNothing) {
        if (lookedForNothing) {
            waiterLooks++;
        }
        if (waitedCqs == 0) {
            waitedPeriod = 1;
        } else if (lookedForNothing && waitedPeriod < MAX_WAITED_PERIOD) {
            waitedPeriod *= 2;
        }
    }

    /**
     * A pass of the poll modes: tasks, every CQ polled, epoll looked at every 64th pass. When nothing was done
     * the idle strategy is asked; adaptive mode, once it is exhausted, sleeps in epoll (at most
     * {@code timeoutMillis}).
     */
    private int pollTurn(boolean adaptive, int timeoutMillis) {
        Object watched = Flight.on ? Flight.turnStarted() : null;
        work = tasks.runTasks();
        for (int i = 0; i < driven.size() && running; i++) {
            drain(driven.get(i));
        }
        if ((++rounds & 63) == 0) {
            int n = Libc.epollWait(epfd, events, maxEvents, 0); // wake-ups and async events
            if (n > 0) {
                work += n;
                handleEvents(n);
            }
            pruneDead();
        }
        turnsDone++;
        int done = work;
        if (watched != null) {
            Flight.turnEnded(watched, dispatcher.name(), done);
        }
        if (done > 0) {
            idle.reset();
        } else if (adaptive && idle.exhausted()) {
            sleepUntilEvent(timeoutMillis);
            idle.reset();
        } else {
            idle.idle(0);
        }
        return done + work;
    }

    /** Adaptive mode, idle for long: arm every CQ, drain once more, then sleep in epoll. */
    private void sleepUntilEvent(int timeoutMillis) {
        work = 0;
        boolean emptied = true;
        for (int i = 0; i < driven.size(); i++) {
            emptied &= armAndDrain(driven.get(i));
        }
        if (work > 0 || !emptied || tasks.hasTasks() || timeoutMillis == 0) {
            return;
        }
        boolean forWaiters = waitedCqs > 0;
        int n = Libc.epollWait(epfd, events, maxEvents, forWaiters ? atMostWaitedPeriod(timeoutMillis)
                : timeoutMillis);
        if (n > 0) {
            work += n;
            handleEvents(n);
        }
        nextWaitedPeriod(forWaiters && n == 0);
    }

    private void handleEvents(int n) {
        for (int i = 0; i < n; i++) {
            long id = Libc.eventData(events, i);
            if (id == WAKE) {
                wakeUp.consume();
                continue;
            }
            Object src = sources.get(id);
            if (src instanceof CompletionChannel ch) {
                takeChannelEvent(ch, id, Libc.eventFlags(events, i));
            } else if (src instanceof DrivenQueue d) {
                takeOwnChannelEvents(d);
            } else if (src instanceof Watched w) {
                runWatched(id, w.onReadable());
            }
        }
    }

    /**
     * One {@code ibv_get_cq_event} per report of a shared channel (level-triggered: an event left pending is reported
     * again), marking its CQ ready; acks in batches. (Reading until EAGAIN cost a {@code poll(2)} every wake-up.) A
     * failed channel leaves the epoll set: its level-triggered report would come back at every {@code epoll_wait}.
     */
    private void takeChannelEvent(CompletionChannel ch, long id, int flags) {
        CompletionQueue cq;
        try {
            cq = ch.nextEvent(true); // epoll_wait reported it readable: the read asks no poll(2)
        } catch (IllegalStateException closedOrUnknown) {
            if (ch.isClosed()) { // its context closed it (idle): the kernel dropped the fd
                sources.remove(id);
            } // else closing (nothing was read; an idle channel has no events) or a CQ it does not know: kept
            return;
        } catch (VerbsException e) {
            forgetChannel(ch, id);
            return;
        }
        if (cq == null) {
            if ((flags & (Libc.EPOLLERR | Libc.EPOLLHUP)) != 0) {
                forgetChannel(ch, id);
            }
            return;
        }
        for (int i = 0; i < driven.size(); i++) {
            DrivenQueue d = driven.get(i);
            if (d.cq == cq) {
                d.ready = true;
                d.armedByEngine = false;
                if (++d.eventsSinceAck >= ACK_BATCH) {
                    cq.acknowledgeEvents();
                    d.eventsSinceAck = 0;
                }
            }
        }
    }

    /** A shared channel out of the epoll set for good (it failed: its device went away), its fd kept open meanwhile. */
    private void forgetChannel(CompletionChannel ch, long id) {
        sources.remove(id);
        try {
            ACCESS.epollCtl(ch, epfd, Libc.EPOLL_CTL_DEL, id, epollScratch);
        } catch (IllegalStateException closedMeanwhile) { // the kernel dropped its fd: out of the set already
            LOG.log(System.Logger.Level.DEBUG, "channel closed while leaving the epoll set", closedMeanwhile);
        }
        LOG.log(System.Logger.Level.WARNING, "completion channel " + ch + " failed: its queues get no more events");
    }

    /**
     * The events of a queue's own channel, unless blocking callers have it (they read them). When a caller holds
     * the queue for a moment the events stay unread and the queue is marked ready: its turn arms and drains it
     * (or leaves it to its waiters), and the next event reports the fd again.
     */
    private void takeOwnChannelEvents(DrivenQueue d) {
        if (d.channelOut) {
            return;
        }
        if (!d.lock.tryLock()) {
            d.ready = true;
            d.armedByEngine = false; // its event stays unread (edge-triggered: not reported again): arm it anew
            return;
        }
        try {
            if (d.channelOut) {
                return;
            }
            for (boolean reported = true;; reported = false) {
                CompletionQueue cq;
                try {
                    cq = d.own.nextEvent(reported);
                } catch (IllegalStateException | VerbsException closedOrFailed) {
                    return; // the queue closed with it: pruned
                }
                if (cq == null) {
                    return;
                }
                d.ready = true;
                d.armedByCaller = 0;
                d.armedByEngine = false;
                if (++d.eventsSinceAck >= ACK_BATCH) {
                    cq.acknowledgeEvents();
                    d.eventsSinceAck = 0;
                }
            }
        } finally {
            d.lock.unlock();
        }
    }

    /** Re-arm, then drain ({@link #armAndDrainNow}); true when the CQ was left empty and armed, false when not. */
    private boolean armAndDrain(DrivenQueue d) {
        long left = d.lastLeft;
        if (d.waiters.get() > 0 || left != 0 && d.withinGrace(left, WAITER_GRACE_NANOS)) {
            if (!d.waitersRecently) { // left to its waiters, unarmed: looked at every 1-8 ms (eventTurn)
                d.waitersRecently = true;
                waitedCqs++;
            }
            return true;
        }
        boolean emptied = armAndDrainNow(d);
        if (emptied && d.waitersRecently) {
            d.waitersRecently = false;
            waitedCqs--;
        }
        return emptied;
    }

    /**
     * Arms {@code d} (unless its last arming's event is still unread), then drains it (false: not emptied, again next
     * turn), as C's event loops do: a completion before the arming is found by the drain, one after it raises an
     * event. (Draining before the arming too cost a poll an event more, finding nothing.)
     */
    private boolean armAndDrainNow(DrivenQueue d) {
        if (!d.lock.tryLock()) {
            return false; // a caller is leaving it (arming, polling): again next turn, without waiting
        }
        try {
            if (d.channelOut && !takeBack(d)) {
                return true; // its channel closed with the queue: pruned
            }
            d.expecting = false; // the engine has the channel: it sees every completion
            if (!d.armedByEngine) { // else armed already, its event not yet read: it will come
                try {
                    d.cq.requestNotification(false);
                } catch (VerbsException e) {
                    dispatcher.broken(d, e);
                    return true;
                } catch (IllegalStateException closedMeanwhile) {
                    return true;
                }
                d.armedByEngine = true;
            }
            return drainLocked(d);
        } finally {
            d.lock.unlock();
        }
    }

    /** Puts a lent channel back into the epoll set (lock held; an event already pending is reported at once). */
    private boolean takeBack(DrivenQueue d) {
        int rc;
        try {
            rc = ACCESS.epollCtl(d.own, epfd, Libc.EPOLL_CTL_ADD, d.ownId, epollScratch);
        } catch (IllegalStateException closed) {
            return false;
        }
        if (rc < 0) {
            dispatcher.broken(d, VerbsException.of("epoll_ctl", -rc, "completion channel of " + d.cq));
            return false;
        }
        d.channelOut = false;
        d.expecting = false;
        d.armedSolicited = false;
        d.armedByEngine = false; // its callers may have read the event of the engine's arming
        return true;
    }

    /** {@link #drainLocked} unless callers poll {@code d} while they wait; false (again next turn) if one holds it. */
    private boolean drain(DrivenQueue d) {
        if (d.waiters.get() > 0) {
            return true;
        }
        if (!d.lock.tryLock()) {
            return false;
        }
        try {
            return drainLocked(d);
        } finally {
            d.lock.unlock();
        }
    }

    /**
     * Polls {@code d} (lock held) until a poll finds it empty or {@link #DRAIN_BUDGET} polls are spent, dispatching
     * each completion. A poll whose dispatch posted a send to a queue pair completing here is followed by another even
     * when it emptied the queue ({@link dev.rdma4j.WorkCompletions#emptied}): that send's completion on rxe is often
     * there already (stopping cost an event more: +30% user instructions in the async short path, 2026-11-30); one
     * that posted none is not (a poll more, finding nothing, each event of send_lat -e). A full batch all dropped
     * (destroyed queue pairs') is not the end either. Returns true when emptied, closed or broken.
     */
    boolean drainLocked(DrivenQueue d) {
        for (int round = 0; round < DRAIN_BUDGET; round++) {
            int sends = ACCESS.sendsPosted(d.cq);
            int n = dispatcher.pollAndDispatch(d);
            if (n < 0) {
                return true; // closed (pruned below), or broken
            }
            work += n;
            if (dispatcher.lastPollEmptied() && (n == 0 || ACCESS.sendsPosted(d.cq) == sends)) {
                return true;
            }
        }
        return false;
    }

    private void pruneDead() {
        driven.removeIf(dead); // one predicate for the engine's life: no lambda allocated each turn
    }

    private boolean forgetIfDead(DrivenQueue d) {
        if (d.broken || d.cq.isClosed()) {
            drivenCqs.remove(d.cq);
            if (d.own != null) {
                sources.remove(d.ownId);
            }
            d.closeCallerBatch();
            if (d.waitersRecently) {
                d.waitersRecently = false;
                waitedCqs--;
            }
            if (d.busy) {
                d.busy = false;
                busyCqs--;
            }
            return true;
        }
        return false;
    }

    // ---------------------------------------------------------------- the end (engine thread)

    /** Fails the pending futures of every queue pair: the engine closed or died. */
    void failAll(String reason, Throwable cause) {
        dispatcher.failAll(reason, cause);
    }

    /** Frees the waiters' batches and acknowledges every CQ's events ({@code ibv_destroy_cq} waits for that). */
    void closeQueues() {
        for (DrivenQueue d : driven) {
            d.closeCallerBatch(); // a caller polling it now frees it as it leaves
            if (!d.cq.isClosed()) {
                try {
                    d.cq.acknowledgeEvents();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "ibv_ack_cq_events failed on " + d.cq, e);
                }
            }
        }
    }

    /** Closes the eventfd and the epoll fd once no other thread uses them (Netty's cleanup), and the memory. */
    void closeFds() {
        wakeUp.closeUses();
        closeFdsNow();
        dispatcher.close();
    }

    private void closeFdsNow() {
        Libc.close(wakeUp.fd);
        Libc.close(epfd);
        arena.close();
    }
}
