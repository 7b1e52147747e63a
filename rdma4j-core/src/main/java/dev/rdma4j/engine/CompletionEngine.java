package dev.rdma4j.engine;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.Access;
import dev.rdma4j.internal.ffi.Libc;
import dev.rdma4j.internal.ffi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Drives completion queues on one platform thread of its own and completes the futures of
 * {@link AsyncQueuePair}s.
 *
 * <p>In {@link PollingMode#EVENT} mode each CQ reports to a completion channel whose fd is
 * non-blocking and registered with epoll edge-triggered ({@code EPOLLIN | EPOLLET}). The cycle is
 * {@code ibv_req_notify_cq} → {@code epoll_wait} → {@code ibv_get_cq_event} until EAGAIN → drain the CQ
 * completely → re-arm → <b>drain again</b>: a completion that lands between the last empty poll and
 * the re-arm raises no event, and the second drain is what keeps the engine free of lost wake-ups.
 * Events are acknowledged in batches ({@code ibv_ack_cq_events}), and all of them before a CQ is
 * destroyed. No timeout is needed for correctness: epoll waits without one. An eventfd wakes the
 * thread for submitted work and for shutdown.
 *
 * <p>Completion callbacks (future stages) run on the engine thread unless the caller chains
 * {@code ...Async} stages with an executor. The thread blocks in {@code epoll_wait}: a platform thread,
 * so no virtual-thread carrier is ever pinned.
 *
 * <p>Close order: queue pairs and CQs created through the engine before the engine, the engine before
 * its contexts.
 *
 * <p>Threading: thread-safe. Everything it calls back (completions, continuations without an executor, fallback
 * handlers, watched-fd handlers, listeners, tasks given to {@link #execute}) runs on its one thread, or, for the
 * completions of a CQ a caller waits on ({@link #pollWhileWaiting}, {@link #blockWhileWaiting}), on that caller's
 * thread, and must not block: a blocking call there stops every other completion (the blocking twins of {@link AsyncQueuePair}
 * detect it and throw). A callback's {@code RuntimeException} is logged and counted ({@link
 * #callbackFailures()}); an {@code Error} ends the engine ({@link #terminationCause()}).
 */
public final class CompletionEngine implements AutoCloseable, java.util.concurrent.Executor {
    private static final long WAKE = 0;
    private static final int ACK_BATCH = 16;
    /** Polls of one CQ per turn before the others, the tasks and the fds get theirs (no starvation). */
    private static final int DRAIN_BUDGET = 16;
    /** {@link #wakers} once the eventfd is about to close: no more writes. */
    private static final int WAKES_CLOSED = Integer.MIN_VALUE;
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.engine");
    private static final Access ACCESS = Access.get();

    private final PollingMode mode;
    private final IdleStrategy idle;
    private final String name;
    /** Driven by a loop of the caller's ({@link Builder#externallyDriven()}), not a thread of its own. */
    private final boolean external;
    /** The engine's thread: its own, or (externally driven) the first to call {@link #runOnce}; null until then. */
    private volatile Thread thread;
    private final int epfd;
    private final int wakeFd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment epollScratch = arena.allocate(Libc.EPOLL_EVENT);
    private final MemorySegment wakeOne = arena.allocate(ValueLayout.JAVA_LONG); // always 1: what wake() writes
    private final MemorySegment wakeRead = arena.allocate(ValueLayout.JAVA_LONG); // the engine thread's
    /** A wake-up is written and not yet consumed by the engine thread: further ones are coalesced. */
    private final AtomicBoolean wakePending = new AtomicBoolean();
    /**
     * Uses of the engine's fds by other threads in progress (wake-up writes, a blocking waiter's {@code epoll_ctl}),
     * or {@link #WAKES_CLOSED}: the fds close only when none is.
     */
    private final java.util.concurrent.atomic.AtomicInteger wakers = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong wakeWrites = new java.util.concurrent.atomic.AtomicLong();
    private volatile Throwable terminationCause;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Map<Context, CompletionChannel> channels = new HashMap<>();
    private final List<AsyncQueuePair> queuePairs = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The CQs this engine drains (any thread reads it: wrap checks a QP's CQs against it, waiters find theirs). */
    private final Map<CompletionQueue, Driven> drivenCqs = new java.util.concurrent.ConcurrentHashMap<>();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private final java.util.concurrent.atomic.LongAdder callbackFailures = new java.util.concurrent.atomic.LongAdder();
    /** Events that woke callers in {@link #blockWhileWaiting}. */
    private final java.util.concurrent.atomic.LongAdder waiterWakeUps = new java.util.concurrent.atomic.LongAdder();
    /** Completions dispatched by callers in {@link #pollWhileWaiting} and {@link #blockWhileWaiting}. */
    private final java.util.concurrent.atomic.LongAdder byWaiters = new java.util.concurrent.atomic.LongAdder();

    // engine thread only
    private final List<Driven> driven = new ArrayList<>();
    private final Map<Long, Object> sources = new HashMap<>();
    private long nextSource = 1;
    private final WorkCompletions wcs;
    private final MemorySegment events;
    private final int maxEvents = 64;
    private volatile boolean running = true;
    private int work; // completions dispatched in this turn (poll modes: whether to idle)
    /** Driven CQs with {@link Driven#busy} (event mode: the turn never waits while there are any). */
    private int busyCqs;
    /** Driven CQs with {@link Driven#waitersRecently}: the turn waits at most {@link #waitedPeriod} while there are any. */
    private int waitedCqs;
    /**
     * How long the turn waits at most while CQs are left to their waiters (ms): 1 when the first is, doubled after
     * each wait that ended with nothing to do while the waiters kept coming back, up to {@link #MAX_WAITED_PERIOD}.
     * Each look is a wake-up of the engine's thread (a timer, two context switches, a turn), which in a busy ping-pong
     * takes a core from a polling caller: looking every millisecond cost a wake-up a round trip in the guest.
     */
    private int waitedPeriod = 1;
    /** The longest {@link #waitedPeriod} (ms): how late, at most, the engine takes back a CQ its waiters left. */
    static final int MAX_WAITED_PERIOD = 8;
    /** Turns completed (engine thread; for tests). */
    private long turnsDone;
    /** Waits for waiters that timed out: the engine's wake-ups while CQs are left to callers (engine thread). */
    private long waiterLooks;
    /**
     * How long after its last waiter left a CQ stays with the waiters, unarmed: a caller that polls while it waits
     * usually comes back sooner (the next receive of a ping-pong), and arming it at every leave would make its
     * next completion interrupt and wake the engine thread for nothing.
     */
    private static final long WAITER_GRACE_NANOS = 1_000_000;
    /** A CQ was left non-empty by its budget (event mode): look at the fds without waiting next turn. */
    private boolean backlog;
    /** Turns of the poll modes (epoll is looked at every 64th). */
    private long rounds;
    /** {@link #shutDown()} has run (externally driven: whichever turn or close came first). */
    private boolean shutDownDone;
    /** Externally driven: a turn is under way on the engine's thread (a close from a callback leaves it to the turn). */
    private boolean inTurn;
    /** What a {@link CompletionHandler} is given: one view, pointed at each completion in turn. */
    private CompletionView view;
    /** {@link #pruneDead()}'s test. */
    private final java.util.function.Predicate<Driven> dead = this::forgetIfDead;

    /** A CQ the engine drains (package-private: an {@link AsyncQueuePair} keeps its queues' for {@link #expect}). */
    static final class Driven {
        final CompletionQueue cq;
        final Consumer<WorkCompletion> fallback;
        final CompletionHandler handler;
        boolean ready;
        boolean broken;
        /** Polled on every turn in event mode too ({@link #busyPoll}); read by waiting callers. */
        volatile boolean busy;
        int eventsSinceAck;
        /**
         * Held while a batch is polled and dispatched, by the engine or a caller in {@link #pollWhileWaiting}: the
         * completions of one queue are dispatched in the order polled. The engine only ever tries it.
         */
        final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        /** Callers polling it in {@link #pollWhileWaiting}: the engine leaves it to them, unarmed. */
        final java.util.concurrent.atomic.AtomicInteger waiters = new java.util.concurrent.atomic.AtomicInteger();
        /** The waiting callers' batch (guarded by lock), made at the first such wait. */
        WorkCompletions callerWcs;
        /** When the last waiter left ({@code System.nanoTime()}, odd), or 0. */
        volatile long lastLeft;
        /**
         * Left to waiters, unarmed (engine thread): they are there or were within {@link #WAITER_GRACE_NANOS};
         * the engine looks at it every 1 to 8 ms ({@link #waitedPeriod}) and arms it once they have been gone a
         * millisecond.
         */
        boolean waitersRecently;
        /**
         * The queue's own completion channel ({@link #createCompletionQueueWithOwnChannel}), which a caller in
         * {@link #blockWhileWaiting} sleeps on; null when the queue shares its context's channel.
         */
        final CompletionChannel own;
        /** {@link #own}'s key among the engine's epoll sources. */
        long ownId;
        /**
         * {@link #own} is out of the engine's epoll set, lent to blocking callers, who read its events (set and
         * cleared under lock; the engine's turn reads it without).
         */
        volatile boolean channelOut;
        /** A caller is in {@link #blockWhileWaiting} on this queue (one at a time). */
        final AtomicBoolean blocking = new AtomicBoolean();
        /**
         * How a blocking caller armed the queue since the last event it read (guarded by lock): 0 not, 1 for
         * solicited completions only, 2 for every completion.
         */
        int armedByCaller;
        /** A sleeping caller armed it for solicited completions only ({@link #expect} re-arms it for every one). */
        volatile boolean armedSolicited;
        /**
         * A request whose completion a future or a handler expects was posted (or awaited) while the channel was
         * lent ({@link #expect}): the engine takes the channel back as soon as no caller sleeps on it, not a
         * millisecond after the last one left (cleared when it does).
         */
        volatile boolean expecting;
        /** The blocking caller's {@code poll(2)} and {@code epoll_ctl} scratch (made at the first such wait). */
        MemorySegment pollfd;
        MemorySegment ctlScratch;

        Driven(CompletionQueue cq, Consumer<WorkCompletion> fallback, CompletionHandler handler,
                CompletionChannel own) {
            this.cq = cq;
            this.fallback = fallback;
            this.handler = handler;
            this.own = own;
        }
    }

    private CompletionEngine(Builder b) throws VerbsException {
        this.mode = b.mode;
        this.idle = b.idle.get();
        this.name = b.name;
        this.external = b.external;
        this.wcs = new WorkCompletions(b.pollBatch);
        this.events = arena.allocate(Libc.EPOLL_EVENT.byteSize() * maxEvents, 8);
        wakeOne.set(ValueLayout.JAVA_LONG, 0, 1L);
        dev.rdma4j.Rdma.ensureAvailable();
        int ep = Libc.epollCreate();
        if (ep < 0) {
            arena.close();
            throw Native.fail("epoll_create1", -ep, null);
        }
        int wake = Libc.eventfd();
        if (wake < 0) {
            Libc.close(ep);
            arena.close();
            throw Native.fail("eventfd", -wake, null);
        }
        this.epfd = ep;
        this.wakeFd = wake;
        int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, wakeFd, Libc.EPOLLIN | Libc.EPOLLET, WAKE, epollScratch);
        if (rc < 0) {
            Libc.close(wakeFd);
            Libc.close(epfd);
            arena.close();
            throw Native.fail("epoll_ctl", -rc, "eventfd");
        }
        if (external) {
            return; // bound to the first thread that calls runOnce
        }
        Thread t = Thread.ofPlatform().daemon().name(b.name).unstarted(this::run);
        this.thread = t;
        this.view = new CompletionView(t);
        try {
            t.start();
        } catch (RuntimeException | Error e) { // no thread (e.g. out of memory): give the fds back
            Libc.close(wakeFd);
            Libc.close(epfd);
            arena.close();
            throw e;
        }
    }

    /**
     * A builder: {@link PollingMode#EVENT}, thread name "rdma4j-engine", 32 completions per poll.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The polling mode.
     *
     * @return the mode
     */
    public PollingMode mode() {
        return mode;
    }

    /**
     * Creates a completion queue this engine drives ({@code ibv_create_cq} on the engine's completion
     * channel for {@code ctx}, armed with {@code ibv_req_notify_cq} in event mode).
     *
     * @param ctx     the context
     * @param minSize the least number of entries
     * @return the queue; build {@link AsyncQueuePair}s on it
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueue(Context ctx, int minSize) throws VerbsException {
        return createCompletionQueue(ctx, minSize, null);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int)}, with a handler for completions that are not
     * from an {@link AsyncQueuePair} (requests posted directly on a {@code QueuePair} with caller wr_ids).
     *
     * @param ctx      the context
     * @param minSize  the least number of entries
     * @param fallback called on the engine thread with each such completion, or null to drop them
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueue(Context ctx, int minSize, Consumer<WorkCompletion> fallback)
            throws VerbsException {
        return create(ctx, minSize, fallback, null);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int, Consumer)}, with a handler that reads each such completion
     * in place ({@link CompletionView}, valid during the call): nothing is allocated per completion.
     *
     * @param ctx      the context
     * @param minSize  the least number of entries
     * @param handler  called on the engine thread with each completion that is not an {@link AsyncQueuePair}'s
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueueWithHandler(Context ctx, int minSize, CompletionHandler handler)
            throws VerbsException {
        return create(ctx, minSize, null, java.util.Objects.requireNonNull(handler, "handler"), false);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int)}, with a completion channel of the queue's own
     * ({@code ibv_create_comp_channel}, then {@code ibv_create_cq} on it: one more fd) instead of the context's
     * shared one: a caller that waits for its completions can then sleep on that
     * channel itself ({@link #blockWhileWaiting}) and dispatch them on its own thread, the event loop of a C
     * program, with no hand-off from the engine's thread. The channel closes with the queue.
     *
     * @param ctx     the context
     * @param minSize the least number of entries
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueueWithOwnChannel(Context ctx, int minSize) throws VerbsException {
        return create(ctx, minSize, null, null, true);
    }

    private CompletionQueue create(Context ctx, int minSize, Consumer<WorkCompletion> fallback,
            CompletionHandler handler) throws VerbsException {
        return create(ctx, minSize, fallback, handler, false);
    }

    private CompletionQueue create(Context ctx, int minSize, Consumer<WorkCompletion> fallback,
            CompletionHandler handler, boolean ownChannel) throws VerbsException {
        ensureOpen();
        CompletionChannel ch = ownChannel ? ctx.createCompletionChannel() : channelFor(ctx);
        CompletionQueue cq;
        try {
            cq = ctx.createCompletionQueue(minSize, ch, 0);
        } catch (VerbsException | RuntimeException e) {
            if (ownChannel) {
                ch.close();
            }
            throw e;
        }
        if (ownChannel) {
            ch.closeWhenIdle(); // with its queue
        }
        try {
            call(() -> {
                Driven d = new Driven(cq, fallback, handler, ownChannel ? ch : null);
                if (ownChannel) {
                    long id = nextSource++;
                    int rc = ACCESS.epollCtl(ch, epfd, Libc.EPOLL_CTL_ADD, id, epollScratch);
                    if (rc < 0) {
                        throw new IllegalStateException(Native.fail("epoll_ctl", -rc, "completion channel")
                                .getMessage());
                    }
                    d.ownId = id;
                    sources.put(id, d);
                }
                driven.add(d);
                drivenCqs.put(cq, d);
                ACCESS.drive(cq, thread); // polling it by hand would race the engine: refused from now on
                if (mode == PollingMode.EVENT) {
                    armAndDrain(d);
                }
            });
        } catch (RuntimeException e) {
            cq.close();
            throw e;
        }
        return cq;
    }

    /**
     * Wraps a queue pair whose CQs this engine drives, for futures-based and blocking operations.
     *
     * @param qp the queue pair; the wrapper owns it from now on: closing the wrapper closes the QP, the
     *           QP's own posts are refused (the wrapper owns its wr_ids), and a reset or a direct close of
     *           the QP fails the wrapper's pending futures
     * @return the async view
     * @throws IllegalStateException    if this engine or the QP is closed, or the QP is already wrapped
     * @throws IllegalArgumentException if the QP's CQs were not created by this engine
     */
    public AsyncQueuePair wrap(dev.rdma4j.QueuePair qp) {
        return wrap(qp, null);
    }

    /**
     * {@link #wrap(dev.rdma4j.QueuePair)} with a handler of tagged requests: the wrapper also posts sends and
     * receives with a tag of the caller's ({@link AsyncQueuePair#sendTagged}, {@link AsyncQueuePair#receiveTagged})
     * whose completions go to {@code handler}, allocating nothing per request.
     *
     * @param qp      the queue pair (see {@link #wrap(dev.rdma4j.QueuePair)})
     * @param handler takes the tagged requests' completions; null for none
     * @return the async view
     * @throws IllegalStateException    if this engine or the QP is closed, or the QP is already wrapped
     * @throws IllegalArgumentException if the QP's CQs were not created by this engine
     */
    public AsyncQueuePair wrap(dev.rdma4j.QueuePair qp, RequestHandler handler) {
        ensureOpen();
        if (qp.isClosed()) {
            throw new IllegalStateException("cannot wrap " + qp + ": it is closed");
        }
        for (CompletionQueue cq : List.of(qp.sendCompletionQueue(), qp.receiveCompletionQueue())) {
            if (!drivenCqs.containsKey(cq)) {
                throw new IllegalArgumentException("cannot wrap " + qp + ": its " + (cq == qp.sendCompletionQueue()
                        ? "send" : "receive") + " CQ " + cq + " is not driven by this engine, so nothing would"
                        + " complete its futures; create its CQs with this engine's createCompletionQueue");
            }
        }
        AsyncQueuePair a = new AsyncQueuePair(this, qp, handler);
        queuePairs.add(a);
        return a;
    }

    void forget(AsyncQueuePair a) {
        queuePairs.remove(a);
    }

    /**
     * Watches the context's async event fd: pending events are read ({@code ibv_get_async_event}),
     * acknowledged and delivered to their objects' listeners on the engine thread.
     *
     * @param ctx the context
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public void watchAsyncEvents(Context ctx) {
        watch(ctx.asyncEventFd(), ctx::processAsyncEvents);
    }

    /**
     * Watches any non-blocking fd edge-triggered ({@code EPOLLIN | EPOLLET}): {@code onReadable} runs on the
     * engine thread once at registration and whenever the fd becomes readable, and must consume
     * everything pending (read until EAGAIN). rdma_cm event channels and async event fds use this.
     *
     * @param fd         a non-blocking file descriptor
     * @param onReadable the handler; an {@link IllegalStateException} from it (its object was closed)
     *                   unregisters it
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), if
     *         {@code epoll_ctl} refuses the fd, or if the engine is externally driven and never turned
     */
    public void watch(int fd, Runnable onReadable) {
        ensureOpen();
        call(() -> {
            long id = nextSource++;
            sources.put(id, new Watched(fd, onReadable));
            int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, fd, Libc.EPOLLIN | Libc.EPOLLET, id, epollScratch);
            if (rc < 0) {
                sources.remove(id);
                throw new IllegalStateException(Native.fail("epoll_ctl", -rc, "fd " + fd).getMessage());
            }
            runWatched(id, onReadable); // edge-triggered: take what is already pending
        });
    }

    /** A watched fd and its handler. */
    private record Watched(int fd, Runnable onReadable) {
    }

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

    private synchronized CompletionChannel channelFor(Context ctx) throws VerbsException {
        CompletionChannel ch = channels.get(ctx);
        if (ch == null || ch.isClosed()) {
            CompletionChannel created = ctx.createCompletionChannel();
            CompletionChannel stale = ch; // closed by its context while idle: the kernel dropped its fd already
            try {
                call(() -> {
                    if (stale != null) {
                        sources.values().remove(stale);
                    }
                    long id = nextSource++;
                    sources.put(id, created);
                    int rc = Libc.epollCtl(epfd, Libc.EPOLL_CTL_ADD, created.fd(), Libc.EPOLLIN | Libc.EPOLLET, id,
                            epollScratch);
                    if (rc < 0) {
                        sources.remove(id);
                        throw new IllegalStateException(Native.fail("epoll_ctl", -rc, "channel").getMessage());
                    }
                });
            } catch (RuntimeException e) {
                created.close();
                throw e;
            }
            channels.put(ctx, created);
            ch = created;
        }
        return ch;
    }

    /**
     * Whether {@link #close()} has begun: posts through its {@link AsyncQueuePair}s then fail at once.
     *
     * @return {@code true} once closing
     */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Whether the calling thread is this engine's thread (Netty's {@code inEventLoop()}): completion
     * callbacks, listeners and continuations of the futures it completes run there, and nothing that waits
     * for the engine may run there.
     *
     * @return {@code true} on the engine thread
     */
    public boolean inEngineThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Whether this engine runs no thread of its own but is driven by its caller's loop through {@link #runOnce}
     * ({@link Builder#externallyDriven()}).
     *
     * @return {@code true} when externally driven
     */
    public boolean isExternallyDriven() {
        return external;
    }

    /**
     * One turn of an {@linkplain Builder#externallyDriven() externally driven} engine on the calling thread, which
     * becomes the engine's thread at its first call (Netty's {@code IoHandler.run}): {@code epoll_wait} for at
     * most {@code timeoutMillis} (0: do not wait; -1: until something happens), then what the engine's own thread
     * does in one pass of its loop: wake-ups consumed, watched fds' handlers run, the completion channels' events
     * taken ({@code ibv_get_cq_event} until EAGAIN), each ready CQ drained, re-armed ({@code ibv_req_notify_cq})
     * and drained again, the tasks given to {@link #execute} run. In {@link PollingMode#BUSY_POLL} it never waits
     * and polls every CQ; in {@link PollingMode#ADAPTIVE} it polls, and after its idle strategy is exhausted arms
     * every CQ and waits as in event mode. After {@link #close()} the turn finishes the shut-down (tasks run,
     * futures failed, events acknowledged, fds closed) and later turns do nothing.
     *
     * @param timeoutMillis how long to wait for something to happen: -1 (indefinitely), 0, or a number of ms;
     *                      a CQ left non-empty by its per-turn budget makes the turn not wait
     * @return how much was done: completions dispatched, fd events handled and tasks run
     * @throws IllegalStateException    if the engine runs its own thread, or another thread drives it already
     * @throws IllegalArgumentException if {@code timeoutMillis < -1}
     */
    public int runOnce(int timeoutMillis) {
        if (!external) {
            throw new IllegalStateException("CompletionEngine " + name + " runs on its own thread: runOnce is for an"
                    + " engine built with externallyDriven()");
        }
        if (timeoutMillis < -1) {
            throw new IllegalArgumentException("timeoutMillis must be -1, 0 or positive: " + timeoutMillis);
        }
        if (thread != Thread.currentThread()) { // bound once; no lock on later turns (channelFor holds it and waits)
            bindToCurrentThread();
        }
        if (shutDownDone) {
            return 0;
        }
        try {
            inTurn = true;
            int done;
            try {
                done = running ? turn(timeoutMillis) : 0;
            } finally {
                inTurn = false;
            }
            if (!running) {
                shutDown();
            }
            return done;
        } catch (Throwable t) {
            terminationCause = t;
            closed.set(true);
            LOG.log(System.Logger.Level.ERROR, "completion engine " + name + " stopped by an error", t);
            shutDown();
            if (t instanceof Error e) {
                throw e;
            }
            return 0;
        }
    }

    /** Externally driven: the first caller becomes the engine's thread; any other caller later is refused. */
    private synchronized void bindToCurrentThread() {
        Thread me = Thread.currentThread();
        if (thread == null) {
            thread = me;
            view = new CompletionView(me);
            dev.rdma4j.internal.EngineThreads.markCurrent(name);
        } else if (thread != me) {
            throw new IllegalStateException("CompletionEngine " + name + " is driven by thread " + thread.getName()
                    + ", not " + me.getName());
        }
    }

    /**
     * Wakes the engine's thread from its {@code epoll_wait} (an eventfd write, coalesced: while one is not yet
     * consumed, more are not written): for the loop that drives an {@linkplain Builder#externallyDriven()
     * externally driven} engine when it has work of its own (Netty's {@code IoHandler.wakeup}). Does nothing
     * once the engine has shut down.
     */
    public void wakeUp() {
        wake();
    }

    /**
     * Throws when a blocking call is made on the engine thread, where it would wait for completions that
     * only this thread delivers (Netty's {@code BlockingOperationException}).
     */
    void refuseBlockingOnEngineThread(String method) {
        if (inEngineThread() || dev.rdma4j.internal.EngineThreads.isMarked()) { // or dispatching as a waiter
            throw new IllegalStateException(method + " blocks and was called on the engine thread (e.g. from a"
                    + " future's continuation or a listener), where it would deadlock the engine: use its ...Async"
                    + " form there, or move the work to another executor");
        }
    }

    /**
     * Completes once every completion {@code cq} holds now has been dispatched: on the engine thread, polls it
     * ({@code ibv_poll_cq}) until it is empty, handing each completion to its future or fallback handler, then
     * completes the returned future there (so its continuations run before any later completion of the CQ).
     * E.g. to end a stream of messages only after those that arrived before the peer's disconnect, whose
     * event may be handled before the CQ is polled.
     *
     * @param cq a completion queue this engine drives
     * @return completes after the drain; exceptionally with {@link RejectedExecutionException} if the engine is
     *         closing, or {@link IllegalArgumentException} if it does not drive {@code cq}
     */
    public java.util.concurrent.CompletableFuture<Void> drained(CompletionQueue cq) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        try {
            execute(new Runnable() {
                private int turns;

                @Override
                public void run() {
                    Driven d = drivenCqs.get(cq);
                    if (d == null) {
                        done.completeExceptionally(new IllegalArgumentException(cq + " is not driven by this engine"
                                + (cq.isClosed() ? " (it is closed)" : "")));
                        return;
                    }
                    // a turn's budget is not this drain's limit; 64 keep a CQ that never empties (a peer sending
                    // without pause) from holding the engine. Callers that wait poll it too: whoever holds its
                    // lock dispatches, in order; while one does, this tries again (a task, so others run)
                    for (; turns < 64; turns++) {
                        if (!d.lock.tryLock()) {
                            try {
                                execute(this);
                            } catch (RejectedExecutionException closing) {
                                done.completeExceptionally(closing);
                            }
                            return;
                        }
                        try {
                            if (drainLocked(d)) {
                                break;
                            }
                        } finally {
                            d.lock.unlock();
                        }
                    }
                    done.complete(null);
                }
            });
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * Waits for {@code f} by polling {@code cq} on the calling thread ({@code ibv_poll_cq}) and dispatching its
     * completions here as the engine would, instead of sleeping until the engine's thread completes {@code f}:
     * no wake-up and no hand-off between threads, for one core spinning while it waits (busy polling by the
     * waiter, as a C program polls its own CQ). Meanwhile the engine leaves {@code cq} to its waiters: it neither
     * polls nor arms it, so its completions raise no event and wake nobody. For a millisecond after the last waiter
     * left (the next one usually comes sooner) it stays unarmed, and the engine looks at it after 1 ms, then
     * 2, 4 and every 8 ms while waiters keep coming back (each look wakes the engine's thread); then
     * the engine arms it again ({@code ibv_req_notify_cq}): what completes while nobody waits is dispatched by the
     * engine, at most about 8 ms late while waiters come and go. Completions are dispatched in the order
     * polled, by one poller at a time; their
     * futures complete on this thread, where their continuations run as on the engine's thread (they must not
     * block: the blocking calls refuse to). Returns early, {@code false}, when polling here cannot go on (the
     * queue or engine closed or broken): the engine then completes {@code f} as usual.
     *
     * @param cq           a completion queue of this engine's, without a {@link CompletionHandler}
     * @param f            what the caller waits for (a future of a request on {@code cq}'s queue pairs)
     * @param timeoutNanos the longest wait
     * @return true once {@code f} is done; false at the deadline, or when polling here ended early
     * @throws InterruptedException     if the thread is interrupted ({@code f} is left as it is)
     * @throws IllegalArgumentException if this engine does not drive {@code cq}, or a handler takes its
     *                                  completions (dispatched in place on the engine's thread only)
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean pollWhileWaiting(CompletionQueue cq, java.util.concurrent.Future<?> f, long timeoutNanos)
            throws InterruptedException {
        java.util.Objects.requireNonNull(f, "f");
        return pollWhileWaiting(cq, f, null, timeoutNanos);
    }

    /**
     * {@link #pollWhileWaiting(CompletionQueue, java.util.concurrent.Future, long)} until {@code done} says so,
     * for a caller that waits for its own state (a message in its inbox, say) rather than a future: nothing is
     * allocated per wait. {@code done} is asked after each poll; it must be cheap and must not block.
     *
     * @param cq           a completion queue of this engine's, without a {@link CompletionHandler}
     * @param done         true once the caller's wait is over
     * @param timeoutNanos the longest wait
     * @return true once {@code done}; false at the deadline, or when polling here ended early
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}, or a handler takes its
     *                                  completions
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean pollWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos)
            throws InterruptedException {
        java.util.Objects.requireNonNull(done, "done");
        return pollWhileWaiting(cq, null, done, timeoutNanos);
    }

    private static boolean isDone(java.util.concurrent.Future<?> f, java.util.function.BooleanSupplier done) {
        return f != null ? f.isDone() : done.getAsBoolean();
    }

    private boolean pollWhileWaiting(CompletionQueue cq, java.util.concurrent.Future<?> f,
            java.util.function.BooleanSupplier done, long timeoutNanos) throws InterruptedException {
        Driven d = drivenCqs.get(cq);
        if (d == null) {
            throw new IllegalArgumentException(cq + " is not driven by this engine");
        }
        if (d.handler != null) {
            throw new IllegalArgumentException(cq + "'s completions go to a CompletionHandler, in place on the engine"
                    + " thread: no other thread may poll it");
        }
        refuseBlockingOnEngineThread("CompletionEngine.pollWhileWaiting");
        long start = System.nanoTime();
        d.waiters.incrementAndGet();
        boolean polling = true;
        try {
            while (!isDone(f, done)) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (!running || !polling) {
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
                d.lastLeft = System.nanoTime() | 1; // odd: never 0, "never left"; the engine arms it a bit later
            }
            if (d.cq.isClosed() || !running) {
                closeCallerBatch(d); // the engine pruned it, or shut down, perhaps while this caller held the lock
            }
        }
    }

    /**
     * How many completions callers waiting in {@link #pollWhileWaiting} or {@link #blockWhileWaiting} polled and
     * dispatched on their own threads (the rest were the engine thread's): how much of the work waiters took over.
     *
     * @return the count since the engine was built
     */
    public long completionsByWaiters() {
        return byWaiters.sum();
    }

    /**
     * How many completion events callers sleeping in {@link #blockWhileWaiting} took (each woke one, or came with
     * one wake-up): with solicited sends, one a message received rather than one for each completion.
     *
     * @return the count since the engine was built
     */
    public long waiterWakeUps() {
        return waiterWakeUps.sum();
    }

    /**
     * One poll of {@code d} on a waiting caller's thread, its completions dispatched there (the queue's lock held).
     *
     * @return the completions dispatched, or -1 if the queue cannot be polled (closed, broken, engine closing)
     */
    private int pollAsCaller(Driven d) {
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
            byWaiters.add(n);
            String engineThread = dev.rdma4j.internal.EngineThreads.markCurrent(name); // continuations must not block
            try {
                for (int i = 0; i < n; i++) {
                    if (ACCESS.driver(w, i) instanceof AsyncQueuePair.Driver owner) {
                        owner.owner().complete(w.wrId(i), w, i);
                    } else if (d.fallback != null) {
                        try {
                            d.fallback.accept(w.get(i));
                        } catch (RuntimeException e) {
                            callbackFailed("the fallback completion handler of " + d.cq, e);
                        }
                    }
                }
            } finally {
                dev.rdma4j.internal.EngineThreads.markCurrent(engineThread);
            }
        }
        return n;
    }

    /**
     * Waits on this thread until {@code done} says so, asleep in the kernel on {@code cq}'s own completion channel
     * and dispatching its completions here: {@code poll(2)} on the channel, {@code ibv_get_cq_event},
     * {@code ibv_poll_cq}, {@code ibv_req_notify_cq} when it is empty, as a C program's event loop does, with no
     * hand-off from the engine's thread (in a ping-pong that hand-off, a wake-up of the engine and then of the
     * waiter, costs more than the rest of the round trip's software). For a blocking call of a connection that
     * waits for its own state (a message in its inbox, a send's buffer), in {@link PollingMode#EVENT} mode.
     *
     * <p>The engine lends the channel: the first such wait takes it out of the engine's epoll set, and the engine,
     * which then looks at the queue every 1 to 8 ms, takes it back about a millisecond after the last waiter left
     * (completions that come between waits are dispatched by the next wait, or at that look). One caller waits
     * here at a time; the sleep is cut into slices of at most 50 ms, between which an interrupt, a close of the
     * queue or of the engine is noticed. Nothing is allocated per wait.
     *
     * @param cq           a completion queue of this engine's made by {@link #createCompletionQueueWithOwnChannel}
     * @param done         true once the caller's wait is over; asked after each poll, it must be cheap and must not
     *                     block
     * @param timeoutNanos the longest wait
     * @return true once {@code done}; false at the deadline, or at once or later when waiting here cannot go on:
     *         the engine is not in event mode, the queue has no channel of its own or is busy-polled, another
     *         caller waits on it, the queue or the engine is closing. The caller then waits the usual way.
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean blockWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos)
            throws InterruptedException {
        return blockWhileWaiting(cq, done, timeoutNanos, false);
    }

    /**
     * {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}, woken only by solicited
     * completions when {@code solicitedOnly} ({@code ibv_req_notify_cq(cq, 1)}): for a caller that waits for a
     * message its peer sends with {@code IBV_SEND_SOLICITED}, so that the completions of its own sends (polled with
     * the next message) do not wake it: one wake-up a message instead of two. A failure wakes it too (a broken
     * connection flushes its receives, and a flushed receive counts as solicited). Only when nothing else is
     * awaited: a request with a future posted meanwhile ({@link #expect}) re-arms the queue for every completion.
     *
     * @param cq            see {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}
     * @param done          true once the caller's wait is over
     * @param timeoutNanos  the longest wait
     * @param solicitedOnly whether only solicited completions (and failures) wake the caller
     * @return as {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean blockWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos,
            boolean solicitedOnly) throws InterruptedException {
        java.util.Objects.requireNonNull(done, "done");
        Driven d = drivenCqs.get(cq);
        if (d == null) {
            throw new IllegalArgumentException(cq + " is not driven by this engine");
        }
        refuseBlockingOnEngineThread("CompletionEngine.blockWhileWaiting");
        if (d.own == null || mode != PollingMode.EVENT || d.busy || d.blocking.get()
                || !d.blocking.compareAndSet(false, true)) {
            return false;
        }
        long start = System.nanoTime();
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
                if (!running) {
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
                long left = timeoutNanos - (System.nanoTime() - start);
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
                d.lastLeft = System.nanoTime() | 1;
            }
            if (d.expecting) { // read after blocking is cleared: an expect() that saw this caller asleep is seen here
                wake(); // the engine takes the channel back now: a future waits for a completion
            }
            if (d.cq.isClosed() || !running) {
                closeCallerBatch(d);
            }
        }
    }

    /** The longest sleep of {@link #blockWhileWaiting} between looks at an interrupt or a close (ms). */
    private static final int BLOCK_SLICE_MILLIS = 50;

    /**
     * One step of a blocking waiter, the queue's lock held: borrow the channel (first time), read its events when
     * it was reported readable, poll and dispatch; when the queue is empty, arm it and poll once more.
     *
     * @return completions dispatched; 0: empty and armed, sleep; -1: waiting here cannot go on
     */
    private int blockerStep(Driven d, boolean readable, boolean solicitedOnly) {
        d.lock.lock(); // held by others only for a poll or a drain
        try {
            if (!d.channelOut && !borrow(d)) {
                return -1;
            }
            if (readable) {
                for (boolean first = true;; first = false) {
                    CompletionQueue q;
                    try {
                        q = d.own.nextEvent(first);
                    } catch (IllegalStateException | VerbsException closedOrFailed) {
                        return -1;
                    }
                    if (q == null) {
                        break;
                    }
                    d.armedByCaller = 0;
                    d.armedSolicited = false;
                    waiterWakeUps.increment();
                    if (++d.eventsSinceAck >= ACK_BATCH) {
                        q.acknowledgeEvents();
                        d.eventsSinceAck = 0;
                    }
                }
            }
            int n = pollAsCaller(d);
            if (n != 0) {
                return n;
            }
            int want = 2;
            if (solicitedOnly && d.armedByCaller != 2) {
                d.armedSolicited = true; // then look at expecting: an expect() either is seen here or sees this
                if (!d.expecting) {
                    want = 1;
                }
            }
            if (d.armedByCaller >= want) {
                return 0;
            }
            try {
                d.cq.requestNotification(want == 1);
            } catch (VerbsException | IllegalStateException e) {
                return -1; // the engine meets it too (broken, pruned)
            }
            d.armedByCaller = want;
            if (want == 2) {
                d.armedSolicited = false;
            }
            return pollAsCaller(d); // what completed before the arming
        } finally {
            d.lock.unlock();
        }
    }

    /** For tests: whether blocking waiters have borrowed {@code cq}'s channel (asked on the engine's thread). */
    boolean lent(CompletionQueue cq) {
        boolean[] out = new boolean[1];
        call(() -> {
            Driven d = drivenCqs.get(cq);
            out[0] = d != null && d.channelOut;
        });
        return out[0];
    }

    /**
     * For tests: returns once a whole turn of the engine (its tasks, then its look at every queue) has run after
     * the call (a task runs before its turn's look, and a task queued meanwhile may run in the same turn).
     */
    void awaitTurn() {
        long[] seen = new long[1];
        call(() -> seen[0] = turnsDone);
        long start = seen[0];
        while (seen[0] == start) {
            call(() -> seen[0] = turnsDone);
        }
    }

    /** The engine's record of {@code cq}, for {@link #expect(Driven)}; null if it does not drive it. */
    Driven home(CompletionQueue cq) {
        return drivenCqs.get(cq);
    }

    /**
     * Tells the engine that a future or a handler, not a caller in {@link #blockWhileWaiting}, expects a completion
     * of {@code cq}'s (a request about to be posted, or a future about to be waited for): while blocking waiters
     * have borrowed the queue's channel, the engine sees its completions only at its next look, up to
     * {@link #MAX_WAITED_PERIOD} ms later. If the channel is lent it takes it back as soon as no caller sleeps on
     * it (a sleeper dispatches every completion meanwhile). {@link AsyncQueuePair}'s future-returning posts do this
     * themselves; a caller of its tagged forms whose completion a future of its own awaits calls it. Costs a
     * volatile read when the channel is not lent.
     *
     * @param cq a completion queue of this engine's (others are ignored)
     */
    public void expect(CompletionQueue cq) {
        expect(drivenCqs.get(cq));
    }

    void expect(Driven d) {
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
            wake(); // nobody sleeps on it: the engine takes it back now
        }
    }

    /**
     * Takes the queue's own channel out of the engine's epoll set for blocking waiters (lock held) and wakes the
     * engine, which from then on looks at the queue now and then and takes the channel back once they are gone.
     */
    private boolean borrow(Driven d) {
        if (d.pollfd == null) {
            Arena auto = Arena.ofAuto();
            d.pollfd = auto.allocate(Libc.POLLFD);
            d.ctlScratch = auto.allocate(Libc.EPOLL_EVENT);
        }
        if (!enterFds()) {
            return false; // the engine is closing its fds
        }
        int rc;
        try {
            rc = ACCESS.epollCtl(d.own, epfd, Libc.EPOLL_CTL_DEL, d.ownId, d.ctlScratch);
        } catch (IllegalStateException closed) {
            return false;
        } finally {
            wakers.decrementAndGet();
        }
        if (rc < 0) {
            return false;
        }
        d.channelOut = true;
        d.armedByCaller = 0; // whatever the engine armed may have fired into the engine's hands already
        wake();
        return true;
    }

    /** Counts a use of the engine's fds ({@link #wakers}): false once they are closing. */
    private boolean enterFds() {
        for (;;) {
            int w = wakers.get();
            if (w < 0) {
                return false; // the engine thread is past its loop and closing its fds
            }
            if (wakers.compareAndSet(w, w + 1)) {
                return true;
            }
        }
    }

    /** Frees a pruned queue's batch of its waiting callers (none waits any more: its queue is closed). */
    private static void closeCallerBatch(Driven d) {
        if (d.lock.tryLock()) {
            try {
                if (d.callerWcs != null) {
                    d.callerWcs.close();
                    d.callerWcs = null;
                }
            } finally {
                d.lock.unlock();
            }
        }
    }

    /**
     * Runs {@code task} on the engine thread, in submission order with the engine's own work (Netty's
     * {@code execute}); with this an engine is an {@link java.util.concurrent.Executor} for continuations
     * ({@code future.thenApplyAsync(fn, engine)}). The task must not block. A task that throws a
     * {@code RuntimeException} is logged and counted ({@link #callbackFailures()}); the engine goes on.
     *
     * @param task what to run
     * @throws RejectedExecutionException once {@link #close()} has begun or the engine thread has died
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        enqueue(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                callbackFailed("a task given to execute()", e);
            }
        });
    }

    /** Queues {@code task} and wakes the thread; a task the closing engine will not run is taken back. */
    private void enqueue(Runnable task) {
        if (closed.get()) {
            throw rejected();
        }
        tasks.add(task);
        // close() may have begun after the check: the engine thread's last runTasks comes after closed is set,
        // so either it takes the task (and runs it) or we take it back here; never neither
        if (closed.get() && tasks.remove(task)) {
            throw rejected();
        }
        wake();
    }

    private RejectedExecutionException rejected() {
        Throwable cause = terminationCause;
        RejectedExecutionException e = new RejectedExecutionException("CompletionEngine " + name
                + (cause != null ? " died: " + cause : " is closed"));
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /**
     * How many times the engine's thread woke only to look at CQs left to their waiters (for tests: the cost of
     * {@link #pollWhileWaiting} to the engine). Waits for the engine thread.
     */
    long waiterLooks() {
        long[] looks = new long[1];
        call(() -> looks[0] = waiterLooks);
        return looks[0];
    }

    /** Runs {@code task} on the engine thread and waits for it (inline when already on it). */
    void call(Runnable task) {
        Thread bound = thread;
        if (Thread.currentThread() == bound) {
            task.run();
            return;
        }
        if (bound == null && !closed.get()) { // externally driven, never turned: waiting could last forever
            throw new IllegalStateException("CompletionEngine " + name + " is externally driven and no loop has"
                    + " called runOnce yet: nothing would run this call");
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            enqueue(() -> {
                try {
                    task.run();
                    done.complete(null);
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException closing) {
            // the close began after the caller's check: the same exception as a call after the close (issue 29)
            ensureOpen();
            throw closing; // not reached: rejected only once closed
        }
        try {
            done.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /**
     * Wakes the engine thread through the eventfd. Coalesced: while a written wake-up is not yet consumed,
     * more are not written. Counted in {@link #wakers} so that the eventfd is never closed under a write.
     */
    private void wake() {
        if (wakePending.get() || !wakePending.compareAndSet(false, true)) {
            return;
        }
        if (!enterFds()) {
            return;
        }
        try {
            Libc.write(wakeFd, wakeOne, 8);
            wakeWrites.incrementAndGet();
        } finally {
            wakers.decrementAndGet();
        }
    }

    /** Eventfd writes so far (wake-ups are coalesced: fewer than the tasks submitted). For tests. */
    long wakeWrites() {
        return wakeWrites.get();
    }

    /**
     * How many callbacks (fallback completion handlers, watched-fd handlers, tasks given to
     * {@link #execute}) threw a {@code RuntimeException}; each was logged and the engine went on (Agrona's
     * error counter). An {@code Error} ends the engine instead ({@link #terminationCause()}).
     *
     * @return the count so far
     */
    public long callbackFailures() {
        return callbackFailures.sum();
    }

    void callbackFailed(String what, RuntimeException e) {
        callbackFailures.increment();
        LOG.log(System.Logger.Level.WARNING, what + " threw on engine thread " + name
                + "; the engine goes on", e);
    }

    /**
     * Whether the engine thread has ended: after {@link #close()}, or when it died of an error
     * ({@link #terminationCause()}). Every pending future of its queue pairs has then been failed.
     *
     * @return {@code true} once the thread has finished
     */
    public boolean isTerminated() {
        return terminated.isDone();
    }

    /**
     * Why the engine thread ended, when it was not {@link #close()}: the error that stopped it (an
     * {@code Error} thrown by a callback, or a failing {@code epoll_wait}). Futures pending then failed
     * with it as their cause, and later posts fail at once with it.
     *
     * @return the cause, or empty while running or after a plain close
     */
    public java.util.Optional<Throwable> terminationCause() {
        return java.util.Optional.ofNullable(terminationCause);
    }

    private void ensureOpen() {
        if (closed.get()) {
            Throwable cause = terminationCause;
            throw new IllegalStateException("CompletionEngine " + name
                    + (cause != null ? " died: " + cause : " is closed"), cause);
        }
    }

    /** Why posts fail now: closed, or died of an error (with the error). */
    IllegalStateException closedError(Object what) {
        Throwable cause = terminationCause;
        return new IllegalStateException("the completion engine of " + what + (cause != null ? " died (" + cause
                + ")" : " is closed") + ": nothing would complete the future", cause);
    }

    // ---------------------------------------------------------------- the engine thread

    private void run() {
        dev.rdma4j.internal.EngineThreads.markCurrent(name);
        try {
            while (running) {
                turn(-1);
            }
        } catch (Throwable t) {
            terminationCause = t;
            closed.set(true);
            LOG.log(System.Logger.Level.ERROR, "completion engine " + name + " stopped by an error", t);
        } finally {
            shutDown();
        }
    }

    /**
     * The engine thread's last act. Order matters: tasks queued before the close run (their callers wait);
     * pending futures fail; CQ events are acknowledged (ibv_destroy_cq waits for that); in-flight wake-up
     * writes finish before the eventfd is closed (Netty's cleanup); then the fds and native memory go.
     */
    private void shutDown() {
        if (shutDownDone) {
            return;
        }
        shutDownDone = true;
        running = false;
        try {
            runTasks();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "a task failed while " + name + " closed", t);
        }
        Throwable cause = terminationCause;
        failAll(cause != null ? "completion engine died: " + cause : "completion engine closed", cause);
        for (Driven d : driven) {
            closeCallerBatch(d); // a caller polling it now frees it as it leaves
            if (!d.cq.isClosed()) {
                try {
                    d.cq.acknowledgeEvents();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "ibv_ack_cq_events failed on " + d.cq, e);
                }
            }
        }
        while (!wakers.compareAndSet(0, WAKES_CLOSED)) {
            Thread.onSpinWait(); // a write(2) of 8 bytes in progress: microseconds
        }
        Libc.close(wakeFd);
        Libc.close(epfd);
        arena.close();
        wcs.close();
        synchronized (this) {
            channels.values().forEach(CompletionChannel::closeWhenIdle); // now, or with their last CQ
        }
        terminated.complete(null);
    }

    /**
     * One pass of the engine's loop (its own thread's, or an external loop's {@link #runOnce}).
     *
     * @param timeoutMillis the longest wait in epoll: -1 (the own thread: until an fd or a wake-up) or more
     * @return the work done: completions, fd events, tasks
     */
    private int turn(int timeoutMillis) {
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
            throw new IllegalStateException(Native.fail("epoll_wait", -n, null).getMessage());
        }
        handleEvents(n);
        work += n + runTasks();
        backlog = false;
        for (int i = 0; i < driven.size() && running; i++) {
            Driven d = driven.get(i);
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
     * Busy-polls {@code cq} in {@link PollingMode#EVENT} mode: the engine polls it on every turn, without waiting for
     * its completion channel, and never sleeps in {@code epoll_wait} while such a CQ exists (one core spins for the
     * lowest latency of that queue; the others keep their events). The poll modes poll every CQ anyway: there it
     * changes nothing.
     *
     * @param cq a completion queue this engine drives
     * @param on whether to busy-poll it
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    if the engine is closed
     */
    public void busyPoll(CompletionQueue cq, boolean on) {
        ensureOpen();
        call(() -> {
            for (Driven d : driven) {
                if (d.cq == cq) {
                    if (d.busy != on) {
                        d.busy = on;
                        busyCqs += on ? 1 : -1;
                    }
                    return;
                }
            }
            throw new IllegalArgumentException(cq + " is not driven by this engine");
        });
    }

    /**
     * A pass of the poll modes: tasks, every CQ polled, epoll looked at every 64th pass. When nothing was done
     * the idle strategy is asked; adaptive mode, once it is exhausted, sleeps in epoll (at most
     * {@code timeoutMillis}).
     */
    private int pollTurn(boolean adaptive, int timeoutMillis) {
        work = runTasks();
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
        if (work > 0 || !emptied || !tasks.isEmpty() || timeoutMillis == 0) {
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
                Libc.read(wakeFd, wakeRead, 8); // drain the counter
                wakePending.set(false); // before the tasks run: a task queued after this writes a new wake-up
                continue;
            }
            Object src = sources.get(id);
            if (src instanceof CompletionChannel ch) {
                takeChannelEvents(ch);
            } else if (src instanceof Driven d) {
                takeOwnChannelEvents(d);
            } else if (src instanceof Watched w) {
                runWatched(id, w.onReadable());
            }
        }
    }

    /** ibv_get_cq_event until EAGAIN (the fd is edge-triggered), marking CQs ready; acks in batches. */
    private void takeChannelEvents(CompletionChannel ch) {
        for (boolean reported = true;; reported = false) {
            CompletionQueue cq;
            try {
                cq = ch.nextEvent(reported); // epoll_wait reported it readable: the first read asks no poll(2)
            } catch (IllegalStateException closed) { // its context closed it (idle): the kernel dropped the fd
                sources.values().remove(ch);
                return;
            } catch (VerbsException e) {
                return;
            }
            if (cq == null) {
                return;
            }
            for (int i = 0; i < driven.size(); i++) {
                Driven d = driven.get(i);
                if (d.cq == cq) {
                    d.ready = true;
                    if (++d.eventsSinceAck >= ACK_BATCH) {
                        cq.acknowledgeEvents();
                        d.eventsSinceAck = 0;
                    }
                }
            }
        }
    }

    /**
     * The events of a queue's own channel, unless blocking callers have it (they read them). When a caller holds
     * the queue for a moment the events stay unread and the queue is marked ready: its turn arms and drains it
     * (or leaves it to its waiters), and the next event reports the fd again.
     */
    private void takeOwnChannelEvents(Driven d) {
        if (d.channelOut) {
            return;
        }
        if (!d.lock.tryLock()) {
            d.ready = true;
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
                if (++d.eventsSinceAck >= ACK_BATCH) {
                    cq.acknowledgeEvents();
                    d.eventsSinceAck = 0;
                }
            }
        } finally {
            d.lock.unlock();
        }
    }

    /**
     * Drain, re-arm, drain again: the second drain closes the lost-wake-up window.
     *
     * @return true when the CQ was left empty and armed; false when its budget ran out first
     */
    private boolean armAndDrain(Driven d) {
        long left = d.lastLeft;
        if (d.waiters.get() > 0 || left != 0 && System.nanoTime() - left < WAITER_GRACE_NANOS) {
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

    /** Drains {@code d}, arms it, drains it again (false: not emptied, again next turn). */
    private boolean armAndDrainNow(Driven d) {
        if (!d.lock.tryLock()) {
            return false; // a caller is leaving it (arming, polling): again next turn, without waiting
        }
        try {
            if (d.channelOut && !takeBack(d)) {
                return true; // its channel closed with the queue: pruned
            }
            d.expecting = false; // the engine has the channel: it sees every completion
            if (!drainLocked(d)) {
                return false;
            }
            try {
                d.cq.requestNotification(false);
            } catch (VerbsException e) {
                broken(d, e);
                return true;
            } catch (IllegalStateException closedMeanwhile) {
                return true;
            }
            return drainLocked(d);
        } finally {
            d.lock.unlock();
        }
    }

    /** Puts a lent channel back into the epoll set (lock held; an event already pending is reported at once). */
    private boolean takeBack(Driven d) {
        int rc;
        try {
            rc = ACCESS.epollCtl(d.own, epfd, Libc.EPOLL_CTL_ADD, d.ownId, epollScratch);
        } catch (IllegalStateException closed) {
            return false;
        }
        if (rc < 0) {
            broken(d, Native.fail("epoll_ctl", -rc, "completion channel of " + d.cq));
            return false;
        }
        d.channelOut = false;
        d.expecting = false;
        d.armedSolicited = false;
        return true;
    }

    /**
     * {@link #drainLocked} unless callers poll {@code d} while they wait; false (not emptied: again next turn) when
     * one holds it for a moment.
     */
    private boolean drain(Driven d) {
        if (d.waiters.get() > 0) {
            return true;
        }
        return drainEvenWithWaiters(d);
    }

    /** {@link #drainLocked}, taking the queue's lock if it is free (false, not emptied, if it is not). */
    private boolean drainEvenWithWaiters(Driven d) {
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
     * Polls {@code d} until it is empty or {@link #DRAIN_BUDGET} polls are spent, dispatching each completion.
     *
     * @return true when emptied (or closed, or broken)
     */
    private boolean drainLocked(Driven d) {
        for (int round = 0; round < DRAIN_BUDGET; round++) {
            int n;
            try {
                n = d.cq.poll(wcs);
            } catch (VerbsException e) {
                broken(d, e);
                return true;
            } catch (IllegalStateException closedMeanwhile) {
                return true; // pruned below
            }
            if (n == 0) {
                return true;
            }
            work += n;
            for (int i = 0; i < n; i++) {
                // routed by the queue pair the core recorded for the request, never by the caller's wr_id
                if (ACCESS.driver(wcs, i) instanceof AsyncQueuePair.Driver owner) {
                    owner.owner().complete(wcs.wrId(i), wcs, i); // false: a request failed meanwhile (reset)
                } else if (d.handler != null) {
                    deliverToHandler(d, i);
                } else if (d.fallback != null) {
                    deliverToFallback(d, i);
                }
            }
        }
        return false;
    }

    /**
     * {@code ibv_poll_cq} failed (a broken CQ, e.g. after a fatal device error): its completions will never
     * come, so the futures of every queue pair on it fail now with that error, and later posts on them too.
     */
    private void broken(Driven d, VerbsException e) {
        if (d.broken) {
            return;
        }
        d.broken = true;
        LOG.log(System.Logger.Level.ERROR, "the engine stops driving " + d.cq + ": " + e.getMessage(), e);
        for (AsyncQueuePair a : queuePairs) {
            dev.rdma4j.QueuePair qp = a.queuePair();
            if (qp.sendCompletionQueue() == d.cq || qp.receiveCompletionQueue() == d.cq) {
                a.fail(e);
            }
        }
    }

    /** For tests: what the engine does when {@code ibv_poll_cq} fails on {@code cq} (rxe's never does). */
    void simulatePollFailure(CompletionQueue cq, VerbsException e) {
        call(() -> {
            for (Driven d : driven) {
                if (d.cq == cq) {
                    broken(d, e);
                }
            }
            pruneDead();
        });
    }

    private void deliverToHandler(Driven d, int i) {
        view.at(wcs, i);
        try {
            d.handler.onCompletion(view);
        } catch (RuntimeException e) {
            callbackFailed("the completion handler of " + d.cq, e);
        } finally {
            view.release();
        }
    }

    private void deliverToFallback(Driven d, int i) {
        try {
            d.fallback.accept(wcs.get(i));
        } catch (RuntimeException e) {
            callbackFailed("the fallback completion handler of " + d.cq, e);
        }
    }

    private void pruneDead() {
        driven.removeIf(dead); // one predicate for the engine's life: no lambda allocated each turn
    }

    private boolean forgetIfDead(Driven d) {
        if (d.broken || d.cq.isClosed()) {
            drivenCqs.remove(d.cq);
            if (d.own != null) {
                sources.remove(d.ownId);
            }
            closeCallerBatch(d);
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

    private int runTasks() {
        int n = 0;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            r.run();
            n++;
        }
        return n;
    }

    private void failAll(String reason, Throwable cause) {
        for (AsyncQueuePair a : queuePairs) {
            a.failPending(reason, cause);
        }
    }

    /**
     * Stops the engine thread (woken through the eventfd): tasks already queued run, later ones are
     * rejected; the futures of every outstanding request of its queue pairs fail with
     * {@link WorkRequestException} ({@code WR_FLUSH_ERR}) and later posts fail at once; all CQ events are
     * acknowledged; the eventfd and epoll fd close once no wake-up write is in flight; its completion
     * channels close, each as soon as its last CQ is closed (CQs still open are no longer drained).
     * Returns when the thread has finished, except on the engine thread itself (from a callback), where it
     * returns at once and the thread finishes when the callback returns. Idempotent; concurrent callers all
     * wait.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            running = false;
            wake();
        }
        if (external) {
            closeExternallyDriven();
        } else if (!inEngineThread()) {
            terminated.join();
        }
    }

    /**
     * An externally driven engine's close: on its thread (or when no thread has driven it yet) the shut-down runs
     * now; on another thread it is left to the driving loop's next {@link #runOnce}, and this returns at once
     * (waiting could hang: nothing obliges that loop to turn again). {@link #isTerminated()} tells when it is done.
     */
    private void closeExternallyDriven() {
        synchronized (this) {
            if (thread == null) {
                thread = Thread.currentThread(); // never driven: this thread finishes it, and no one drives it after
                view = new CompletionView(thread);
            }
        }
        if (thread == Thread.currentThread() && !shutDownDone && !inTurn) { // in a turn: it shuts down at its end
            shutDown();
        }
    }

    /** Builds a {@link CompletionEngine}. */
    public static final class Builder {
        private PollingMode mode = PollingMode.EVENT;
        private Supplier<IdleStrategy> idle;
        private String name = "rdma4j-engine";
        private int pollBatch = 32;
        private boolean external;

        private Builder() {
        }

        /**
         * The polling mode.
         *
         * @param mode EVENT, BUSY_POLL or ADAPTIVE
         * @return this
         */
        public Builder mode(PollingMode mode) {
            this.mode = Objects.requireNonNull(mode);
            return this;
        }

        /**
         * The idle strategy of BUSY_POLL (default: spin) and ADAPTIVE (default: 1000 spins, 100 yields,
         * then epoll).
         *
         * @param idle makes the strategy for the engine thread
         * @return this
         */
        public Builder idleStrategy(Supplier<IdleStrategy> idle) {
            this.idle = idle;
            return this;
        }

        /**
         * The engine thread's name.
         *
         * @param name the name
         * @return this
         */
        public Builder name(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("the engine thread's name must not be null or blank");
            }
            this.name = name;
            return this;
        }

        /**
         * No thread of the engine's own: the caller's event loop drives it with {@link CompletionEngine#runOnce}
         * and wakes it with {@link CompletionEngine#wakeUp()} (e.g. a Netty {@code IoHandler}); the first thread
         * to call {@code runOnce} becomes the engine's thread, and callbacks run there. {@link #name} then names
         * the engine in messages only.
         *
         * @return this
         */
        public Builder externallyDriven() {
            this.external = true;
            return this;
        }

        /**
         * Completions taken per {@code ibv_poll_cq}.
         *
         * @param n at least 1
         * @return this
         */
        public Builder pollBatch(int n) {
            this.pollBatch = n;
            return this;
        }

        /**
         * Starts the engine thread (none when {@linkplain #externallyDriven() externally driven}).
         *
         * @return the running engine
         * @throws VerbsException if epoll or the eventfd cannot be created
         */
        public CompletionEngine build() throws VerbsException {
            if (idle == null) {
                idle = mode == PollingMode.ADAPTIVE ? () -> IdleStrategy.backoff(1000, 100, 1000, 1000)
                        : IdleStrategy::busySpin;
            }
            return new CompletionEngine(this);
        }
    }
}
