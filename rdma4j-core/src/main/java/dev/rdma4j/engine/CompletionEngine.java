package dev.rdma4j.engine;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
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
 */
public final class CompletionEngine implements AutoCloseable {
    private static final long WAKE = 0;
    private static final int ACK_BATCH = 16;
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.engine");

    private final PollingMode mode;
    private final IdleStrategy idle;
    private final Thread thread;
    private final int epfd;
    private final int wakeFd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment epollScratch = arena.allocate(Libc.EPOLL_EVENT);
    private final MemorySegment wakeBuf = arena.allocate(ValueLayout.JAVA_LONG);
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Map<Context, CompletionChannel> channels = new HashMap<>();
    private final List<AsyncQueuePair> queuePairs = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    // engine thread only
    private final List<Driven> driven = new ArrayList<>();
    private final Map<Long, Object> sources = new HashMap<>();
    private long nextSource = 1;
    private final WorkCompletions wcs;
    private final MemorySegment events;
    private final int maxEvents = 64;
    private volatile boolean running = true;

    /** A CQ the engine drains. */
    private static final class Driven {
        final CompletionQueue cq;
        final Consumer<WorkCompletion> fallback;
        boolean ready;
        int eventsSinceAck;

        Driven(CompletionQueue cq, Consumer<WorkCompletion> fallback) {
            this.cq = cq;
            this.fallback = fallback;
        }
    }

    private CompletionEngine(Builder b) throws VerbsException {
        this.mode = b.mode;
        this.idle = b.idle.get();
        this.wcs = new WorkCompletions(b.pollBatch);
        this.events = arena.allocate(Libc.EPOLL_EVENT.byteSize() * maxEvents, 8);
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
        this.thread = Thread.ofPlatform().daemon().name(b.name).unstarted(this::run);
        try {
            thread.start();
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
     */
    public CompletionQueue createCompletionQueue(Context ctx, int minSize, Consumer<WorkCompletion> fallback)
            throws VerbsException {
        ensureOpen();
        CompletionChannel ch = channelFor(ctx);
        CompletionQueue cq = ctx.createCompletionQueue(minSize, ch, 0);
        try {
            call(() -> {
                Driven d = new Driven(cq, fallback);
                driven.add(d);
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
     * @param qp the queue pair; the wrapper owns it from now on (closing it closes the QP)
     * @return the async view
     */
    public AsyncQueuePair wrap(dev.rdma4j.QueuePair qp) {
        ensureOpen();
        if (qp.isClosed()) {
            throw new IllegalStateException("cannot wrap " + qp + ": it is closed");
        }
        AsyncQueuePair a = new AsyncQueuePair(this, qp);
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
            LOG.log(System.Logger.Level.WARNING, "fd handler failed", e);
        }
    }

    private synchronized CompletionChannel channelFor(Context ctx) throws VerbsException {
        CompletionChannel ch = channels.get(ctx);
        if (ch == null || ch.isClosed()) {
            CompletionChannel created = ctx.createCompletionChannel();
            try {
                call(() -> {
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
     * Throws when a blocking call is made on the engine thread, where it would wait for completions that
     * only this thread delivers (Netty's {@code BlockingOperationException}).
     */
    void refuseBlockingOnEngineThread(String method) {
        if (inEngineThread()) {
            throw new IllegalStateException(method + " blocks and was called on the engine thread (e.g. from a"
                    + " future's continuation or a listener), where it would deadlock the engine: use its ...Async"
                    + " form there, or move the work to another executor");
        }
    }

    /** Runs {@code task} on the engine thread and waits for it (inline when already on it). */
    void call(Runnable task) {
        if (Thread.currentThread() == thread) {
            task.run();
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        wake();
        try {
            done.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    private void wake() {
        wakeBuf.set(ValueLayout.JAVA_LONG, 0, 1L);
        Libc.write(wakeFd, wakeBuf, 8);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("CompletionEngine is closed");
        }
    }

    // ---------------------------------------------------------------- the engine thread

    private void run() {
        try {
            switch (mode) {
                case EVENT -> eventLoop();
                case BUSY_POLL -> pollLoop(false);
                case ADAPTIVE -> pollLoop(true);
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "completion engine stopped by an error", t);
            failAll("engine failed: " + t);
        } finally {
            runTasks();
            terminated.complete(null);
        }
    }

    private void eventLoop() {
        while (running) {
            int n = Libc.epollWait(epfd, events, maxEvents, -1);
            if (n < 0) {
                if (-n == Libc.EINTR) {
                    continue;
                }
                throw new IllegalStateException(Native.fail("epoll_wait", -n, null).getMessage());
            }
            handleEvents(n);
            runTasks();
            for (int i = 0; i < driven.size(); i++) {
                Driven d = driven.get(i);
                if (d.ready) {
                    d.ready = false;
                    armAndDrain(d);
                }
            }
            pruneDead();
        }
    }

    private void pollLoop(boolean adaptive) {
        long rounds = 0;
        while (running) {
            int work = runTasks();
            for (int i = 0; i < driven.size(); i++) {
                work += drain(driven.get(i));
            }
            if ((++rounds & 63) == 0) {
                int n = Libc.epollWait(epfd, events, maxEvents, 0); // wake-ups and async events
                if (n > 0) {
                    work += n;
                    handleEvents(n);
                }
                pruneDead();
            }
            if (work > 0) {
                idle.reset();
            } else if (adaptive && idle.exhausted()) {
                sleepUntilEvent();
                idle.reset();
            } else {
                idle.idle(0);
            }
        }
    }

    /** Adaptive mode, idle for long: arm every CQ, drain once more, then sleep in epoll. */
    private void sleepUntilEvent() {
        int found = 0;
        for (int i = 0; i < driven.size(); i++) {
            found += armAndDrain(driven.get(i));
        }
        if (found > 0 || !tasks.isEmpty()) {
            return;
        }
        int n = Libc.epollWait(epfd, events, maxEvents, -1);
        if (n > 0) {
            handleEvents(n);
        }
    }

    private void handleEvents(int n) {
        for (int i = 0; i < n; i++) {
            long id = Libc.eventData(events, i);
            if (id == WAKE) {
                Libc.read(wakeFd, wakeBuf, 8); // drain the counter
                continue;
            }
            Object src = sources.get(id);
            if (src instanceof CompletionChannel ch) {
                takeChannelEvents(ch);
            } else if (src instanceof Watched w) {
                runWatched(id, w.onReadable());
            }
        }
    }

    /** ibv_get_cq_event until EAGAIN (the fd is edge-triggered), marking CQs ready; acks in batches. */
    private void takeChannelEvents(CompletionChannel ch) {
        for (;;) {
            CompletionQueue cq;
            try {
                cq = ch.nextEvent();
            } catch (VerbsException | IllegalStateException e) {
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

    /** Drain, re-arm, drain again: the second drain closes the lost-wake-up window. */
    private int armAndDrain(Driven d) {
        int n = drain(d);
        try {
            d.cq.requestNotification(false);
        } catch (VerbsException | IllegalStateException e) {
            d.ready = false;
            return n;
        }
        return n + drain(d);
    }

    private int drain(Driven d) {
        int total = 0;
        for (;;) {
            int n;
            try {
                n = d.cq.poll(wcs);
            } catch (VerbsException | IllegalStateException e) {
                return total; // closed or broken: pruned below
            }
            if (n == 0) {
                return total;
            }
            for (int i = 0; i < n; i++) {
                long wrId = wcs.wrId(i);
                AsyncQueuePair owner = AsyncQueuePair.owner(PendingRequests.owner(wrId));
                if (owner == null || !owner.complete(wrId, wcs, i)) {
                    if (d.fallback != null) {
                        d.fallback.accept(wcs.get(i));
                    }
                }
            }
            total += n;
        }
    }

    private void pruneDead() {
        driven.removeIf(d -> d.cq.isClosed());
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

    private void failAll(String reason) {
        for (AsyncQueuePair a : queuePairs) {
            a.failPending(reason);
        }
    }

    /**
     * Stops the engine thread (woken through the eventfd), fails the futures of every outstanding
     * request of its queue pairs with {@link WorkRequestException} ({@code WR_FLUSH_ERR}), acknowledges
     * all CQ events, and closes its completion channels (each as soon as its last CQ is closed; CQs
     * still open are no longer drained). Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        tasks.add(() -> {
            running = false;
            for (Driven d : driven) {
                if (!d.cq.isClosed()) {
                    d.cq.acknowledgeEvents();
                }
            }
        });
        wake();
        if (Thread.currentThread() != thread) {
            terminated.join();
        }
        failAll("completion engine closed");
        Libc.close(wakeFd);
        Libc.close(epfd);
        arena.close();
        wcs.close();
        synchronized (this) {
            channels.values().forEach(CompletionChannel::closeWhenIdle); // now, or with their last CQ
        }
    }

    /** Builds a {@link CompletionEngine}. */
    public static final class Builder {
        private PollingMode mode = PollingMode.EVENT;
        private Supplier<IdleStrategy> idle;
        private String name = "rdma4j-engine";
        private int pollBatch = 32;

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
         * Starts the engine thread.
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
