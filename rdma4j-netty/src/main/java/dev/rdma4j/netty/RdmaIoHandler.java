package dev.rdma4j.netty;

import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The {@link IoHandler} of an RDMA event loop (Netty 4.2's {@code MultiThreadIoEventLoopGroup}): the loop's own
 * {@code epoll_wait} is that of an {@linkplain CompletionEngine.Builder#externallyDriven() externally driven}
 * rdma4j {@link CompletionEngine}, so the completion channels of the loop's {@link RdmaChannel}s, its rdma_cm
 * event channel and the engine's wake-up eventfd are watched in one epoll set, with the engine's discipline: fds
 * non-blocking, the shared completion channels level-triggered and read once per report ({@code ibv_get_cq_event}),
 * {@code ibv_req_notify_cq} then drain, acknowledgements in batches. Completions are dispatched in place to the channels' handlers on the loop
 * thread.
 *
 * <pre>{@code
 * EventLoopGroup group = new MultiThreadIoEventLoopGroup(RdmaIoHandler.newFactory());
 * new ServerBootstrap().group(group).channel(RdmaServerChannel.class)...
 * }</pre>
 *
 * <p>{@link PollingMode#BUSY_POLL} ({@link #newFactory(PollingMode)}) polls every CQ on every pass of the loop and
 * never sleeps; {@link PollingMode#ADAPTIVE} polls, then after its idle strategy runs out arms the CQs and sleeps
 * in epoll.
 *
 * <p>Threading: created by Netty for one event loop and used only on that loop's thread, except
 * {@link #wakeup()}, which any thread may call. Nothing that runs on that thread (channel handlers included) may
 * block: it would stop every completion of the loop's channels.
 */
public final class RdmaIoHandler implements IoHandler {
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.netty");

    private final ThreadAwareExecutor executor;
    private final CompletionEngine engine;
    private final Set<Registration> registrations = new HashSet<>();
    /** The pipes (verbs side of channels) not yet torn down, also those closed and lingering. */
    private final Set<RdmaPipe> pipes = new HashSet<>();
    /** rdma_cm's events of this loop's listeners and outgoing connections; made when first needed. */
    private CmEventChannel cm;
    /** Per device context: the PD this loop's channels share, its allocator and its regions by address. */
    private final java.util.Map<dev.rdma4j.Context, RegisteredMemory> memories = new java.util.HashMap<>();

    private RdmaIoHandler(ThreadAwareExecutor executor, PollingMode mode) {
        this.executor = Objects.requireNonNull(executor, "executor");
        try {
            this.engine = CompletionEngine.builder().mode(mode).name("rdma4j-netty-" + System.identityHashCode(this))
                    .externallyDriven().build();
        } catch (VerbsException e) {
            throw new IllegalStateException("cannot make the RDMA event loop's engine: " + e.getMessage(), e);
        }
    }

    /**
     * A factory of event-mode handlers ({@link PollingMode#EVENT}): the loop sleeps in {@code epoll_wait} until a
     * completion channel, an rdma_cm event or a task needs it.
     *
     * @return the factory, for {@code new MultiThreadIoEventLoopGroup(factory)}
     */
    public static IoHandlerFactory newFactory() {
        return newFactory(PollingMode.EVENT);
    }

    /**
     * A factory of handlers polling in {@code mode}.
     *
     * @param mode {@link PollingMode#EVENT}, {@link PollingMode#BUSY_POLL} (every pass polls every CQ, the loop
     *             never sleeps: one core per loop) or {@link PollingMode#ADAPTIVE}
     * @return the factory
     */
    public static IoHandlerFactory newFactory(PollingMode mode) {
        Objects.requireNonNull(mode, "mode");
        return executor -> new RdmaIoHandler(executor, mode);
    }

    /** Binds the engine to the loop's thread (Netty calls this on it before the first {@link #run}). */
    @Override
    public void initialize() {
        engine.runOnce(0);
    }

    /**
     * One pass of the engine ({@link CompletionEngine#runOnce}): waits in epoll as long as Netty allows (not at all
     * when tasks are pending, until the next scheduled task otherwise), then dispatches completions, rdma_cm events
     * and the engine's own tasks.
     */
    @Override
    public int run(IoHandlerContext context) {
        int timeoutMillis = 0;
        long nanos = 0;
        if (context.canBlock()) {
            nanos = context.delayNanos(System.nanoTime());
            timeoutMillis = (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999));
        }
        if (engine.isTerminated()) { // died of an error: its channels are closed; do not spin
            engineDied();
            if (nanos > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(this, nanos);
            }
            return 0;
        }
        return engine.runOnce(timeoutMillis);
    }

    /** The engine died (an error in a turn): every channel of the loop is closed, since nothing completes its I/O. */
    private void engineDied() {
        if (registrations.isEmpty() && pipes.isEmpty()) {
            return;
        }
        LOG.log(System.Logger.Level.ERROR, "the engine of an RDMA event loop died ("
                + engine.terminationCause().map(Throwable::toString).orElse("closed") + "): closing its channels");
        prepareToDestroy();
        for (RdmaPipe p : new ArrayList<>(pipes)) {
            p.teardown();
        }
    }

    void pipeOpened(RdmaPipe p) {
        pipes.add(p);
    }

    void pipeClosed(RdmaPipe p) {
        pipes.remove(p);
    }

    /** Wakes the loop from {@code epoll_wait} (the engine's eventfd); nothing to do on the loop's own thread. */
    @Override
    public void wakeup() {
        if (!executor.isExecutorThread(Thread.currentThread())) {
            engine.wakeUp();
        }
    }

    /** The loop shuts down: every channel still registered is closed. */
    @Override
    public void prepareToDestroy() {
        for (Registration r : new ArrayList<>(registrations)) {
            try {
                r.handle.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "closing " + r.handle + " as its event loop shut down failed", e);
            }
        }
    }

    /**
     * Last: the closes still lingering are let finish (their last messages and the close mark reach the peer, as a
     * TCP socket's kernel sends what was written before a close after the process is gone), for at most the linger
     * time, 10 s, by turning the engine here; then the registered memory (free chunks now; the rest, and the PDs,
     * when their last buffer is released), the rdma_cm event channel and the engine (its epoll fd, eventfd and
     * completion channels).
     */
    @Override
    public void destroy() {
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RdmaChannel.LINGER_MILLIS);
            for (long left; !pipes.isEmpty() && !engine.isTerminated()
                    && (left = deadline - System.nanoTime()) > 0;) { // Netty cancelled their linger timers
                engine.runOnce((int) Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(left))));
            }
            for (RdmaPipe p : new ArrayList<>(pipes)) { // still lingering: cut short
                p.teardown();
            }
            memories.values().forEach(RegisteredMemory::close);
        } finally {
            closeCmAndEngine();
        }
    }

    private void closeCmAndEngine() {
        if (cm != null) {
            try {
                cm.close();
            } catch (IllegalStateException stillUsed) {
                // ids of connections accepted here and registered on another loop still live; rdma_cm keeps the
                // channel until they are destroyed (docs/ARCHITECTURE.md, known gaps: shut the worker group down
                // before the boss group)
                LOG.log(System.Logger.Level.WARNING, "the rdma_cm event channel of an RDMA event loop stays open: "
                        + stillUsed.getMessage());
            }
        }
        engine.close();
    }

    @Override
    public IoRegistration register(IoHandle handle) {
        if (!(handle instanceof RdmaIoHandle h)) {
            throw new IllegalArgumentException("an RDMA event loop takes only rdma4j-netty channels, not "
                    + handle.getClass().getName());
        }
        Registration r = new Registration(h);
        registrations.add(r);
        h.registered();
        return r;
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return RdmaIoHandle.class.isAssignableFrom(handleType);
    }

    /**
     * Registers a channel's {@code handle} with its loop ({@link IoEventLoop#register}): on success {@code registered}
     * gets the registration, the promise succeeds, then {@code after} runs (when not null); on failure the promise fails.
     */
    static void register(io.netty.channel.EventLoop loop, RdmaIoHandle handle, io.netty.channel.ChannelPromise promise,
            java.util.function.Consumer<IoRegistration> registered, Runnable after) {
        ((io.netty.channel.IoEventLoop) loop).register(handle).addListener(f -> {
            if (!f.isSuccess()) {
                promise.setFailure(f.cause());
                return;
            }
            registered.accept((IoRegistration) f.getNow());
            promise.setSuccess();
            if (after != null) {
                after.run();
            }
        });
    }

    /** Cancels a channel's registration, if it has one (its {@code doDeregister}). */
    static void deregister(IoRegistration registration) {
        if (registration != null) {
            registration.cancel();
        }
    }

    /** The loop's engine: CQs of its channels are created on it (loop thread only). */
    CompletionEngine engine() {
        return engine;
    }

    /** The registered memory of this loop on {@code context}'s device, made on first use (loop thread only). */
    RegisteredMemory memory(dev.rdma4j.Context context) throws VerbsException {
        RegisteredMemory m = memories.get(context);
        if (m == null) {
            m = new RegisteredMemory(context, io.netty.buffer.ByteBufAllocator.DEFAULT);
            memories.put(context, m);
        }
        return m;
    }

    /** The loop's rdma_cm event channel, made on first use (loop thread only). */
    CmEventChannel cmChannel() throws VerbsException {
        if (cm == null || cm.isClosed()) {
            cm = CmEventChannel.create(engine);
        }
        return cm;
    }

    /** A channel's registration with this handler. */
    private final class Registration implements IoRegistration {
        private final RdmaIoHandle handle;
        private volatile boolean valid = true;

        Registration(RdmaIoHandle handle) {
            this.handle = handle;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T attachment() {
            return (T) RdmaIoHandler.this;
        }

        @Override
        public long submit(IoOps ops) {
            throw new UnsupportedOperationException("an RDMA channel's I/O is driven by its completion queue");
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public boolean cancel() {
            if (!valid) {
                return false;
            }
            valid = false;
            if (executor.isExecutorThread(Thread.currentThread())) {
                unregister();
            } else {
                executor.execute(this::unregister);
            }
            return true;
        }

        private void unregister() {
            if (registrations.remove(this)) {
                handle.unregistered();
            }
        }
    }
}
