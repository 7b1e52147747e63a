package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.Timeouts;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connected rdma_cm id with its ready {@link QueuePair} (RTS). Both sides see a disconnect by either
 * one in {@link #disconnectedAsync()}. Close it before the PD/CQs its queue pair uses.
 *
 * <p><b>Who owns the queue pair.</b> The connection does: {@link #close()} closes its queue pair
 * ({@code rdma_destroy_qp}) before destroying the id. An {@link dev.rdma4j.engine.AsyncQueuePair} made by
 * {@code engine.wrap(connection.queuePair())} drives the queue pair but is a view of it: closing the wrapper
 * closes the queue pair too (its pending futures fail), and the connection then only destroys its id.
 * Either order works, and closing both is never an error; the natural try-with-resources order (wrapper
 * opened last, closed first) is the usual one.
 *
 * <p><b>Private data.</b> The CM pads private data to fixed sizes on InfiniBand and RoCE (56 bytes for a
 * connect, 196 for an accept, 148 for a reject); rdma4j adds a small trailer in the padding so that
 * {@link #peerPrivateData()}, {@link CmConnectionRequest#privateData()} and {@link CmException#privateData()}
 * return exactly what an rdma4j peer sent (up to 52, 192 and 144 bytes). The caller's bytes come first, so C
 * peers read them unchanged; data from a C peer, which has no trailer, comes back as the CM delivered it.
 *
 * <p>Thread-safe. rdma_cm events of the id are handled on the engine thread (route resolution,
 * {@code rdma_create_qp} and {@code rdma_connect} on the active side, answering a peer's disconnect);
 * {@link #disconnect()} and {@link #close()} run on the caller's thread. Every native call on the id is
 * counted, and {@link #close()} destroys the id only once the calls in progress returned; a call after
 * the close throws {@link IllegalStateException}.
 */
public final class CmConnection implements AutoCloseable {
    private final CmEventChannel channel;
    private final CmId id;
    private final String what;
    private final CompletableFuture<CmConnection> established = new CompletableFuture<>();
    private final CompletableFuture<Void> disconnected = new CompletableFuture<>();
    private final AtomicBoolean disconnecting = new AtomicBoolean();
    /** Set once by whoever completes {@link #established}: ESTABLISHED, a failure, or the deadline. */
    private final AtomicBoolean settled = new AtomicBoolean();
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<CmEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile QueuePair queuePair;
    /** Set once the queue pair's destruction ({@code rdma_destroy_qp}, through its close) has returned. */
    private volatile boolean queuePairDestroyed;
    private volatile Context context;
    private volatile byte[] peerPrivateData = new byte[0];
    // active side only
    private ConnectionSetup setup;
    private byte[] myPrivateData;
    private int resolveTimeoutMs;
    private long deadlineNanos;
    private Duration timeout;
    private volatile ScheduledFuture<?> deadline;
    /** What the active side waits for, for the timeout's message. */
    private volatile String stage = "address resolution (rdma_resolve_addr)";

    private CmConnection(CmEventChannel channel, CmId id, String what) {
        this.channel = channel;
        this.id = id;
        this.what = what;
        id.owner("CmConnection(" + what + ")");
        channel.register(id, (e, request) -> onEvent(e));
    }

    /**
     * Connects to a listening peer: {@code rdma_resolve_addr}, {@code rdma_resolve_route}, the queue pair
     * from {@code setup} ({@code rdma_create_qp}, then {@link ConnectionSetup#beforeConnect}), then
     * {@code rdma_connect} with {@code privateData}. The source address is the one the route picks.
     *
     * <p>{@code timeout} bounds the whole connect, from resolving the address to ESTABLISHED: the IB CM by
     * itself retries an unanswered connect request for over a minute. When it passes, the attempt is
     * cancelled (the queue pair closed, the id destroyed, as on any failure) and the future fails with a
     * {@link TimeoutException} naming the step that did not finish.
     *
     * @param channel     the event channel
     * @param peer        the peer's address and port
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's connection request, at most 56 bytes (52 keep their length at an
     *                    rdma4j peer, see the class comment)
     * @param timeout     for the whole connect, until ESTABLISHED; positive; longer than {@code Long.MAX_VALUE}
     *                    nanoseconds (about 292 years) is taken as that, no deadline in practice
     * @return completes with the connection when ESTABLISHED, or exceptionally with a {@link CmException}
     *         (rejected, unreachable, ...), a {@link TimeoutException} or a {@link VerbsException}; or with an
     *         {@link IllegalArgumentException} (a timeout not positive, private data too long) before anything is
     *         created
     */
    public static CompletableFuture<CmConnection> connectAsync(CmEventChannel channel, InetSocketAddress peer,
            ConnectionSetup setup, byte[] privateData, Duration timeout) {
        return connectAsync(channel, null, peer, setup, privateData, timeout);
    }

    /**
     * Connects to a listening peer from a chosen source address (rping's {@code -I}): {@code rdma_bind_addr}
     * to {@code source}, then as {@link #connectAsync(CmEventChannel, InetSocketAddress, ConnectionSetup, byte[],
     * Duration)}.
     *
     * @param channel     the event channel
     * @param source      the local address to bind to, port 0 for any; {@code null} to let the route pick
     * @param peer        the peer's address and port
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's connection request, at most 56 bytes
     * @param timeout     for the whole connect, until ESTABLISHED; positive; longer than {@code Long.MAX_VALUE}
     *                    nanoseconds (about 292 years) is taken as that, no deadline in practice
     * @return completes with the connection when ESTABLISHED, or exceptionally with a {@link CmException}
     *         (rejected, unreachable, ...), a {@link TimeoutException} or a {@link VerbsException}
     *         ({@code rdma_bind_addr} with {@code EADDRNOTAVAIL} for an address this host does not have); or with an
     *         {@link IllegalArgumentException} (a timeout not positive, private data too long) before anything is
     *         created
     */
    public static CompletableFuture<CmConnection> connectAsync(CmEventChannel channel, InetSocketAddress source,
            InetSocketAddress peer, ConnectionSetup setup, byte[] privateData, Duration timeout) {
        return connectAsync(channel, source, peer, setup, privateData, timeout, timeout);
    }

    /**
     * As {@link #connectAsync(CmEventChannel, InetSocketAddress, InetSocketAddress, ConnectionSetup, byte[],
     * Duration)}, with C's per-step timeout for {@code rdma_resolve_addr} and {@code rdma_resolve_route}
     * ({@code timeout_ms}) apart from the deadline of the whole connect (the tools use it to behave as
     * rdma-core's: 2 s per resolution, then as long as the CM retries).
     *
     * @param channel        the event channel
     * @param source         the local address to bind to, port 0 for any; {@code null} to let the route pick
     * @param peer           the peer's address and port
     * @param setup          the queue pair's PD/CQs/capacities
     * @param privateData    for the peer's connection request, at most 56 bytes
     * @param resolveTimeout for address and route resolution each (within {@code timeout}); positive; C's
     *                       {@code timeout_ms} is an int, so at most {@code Integer.MAX_VALUE} ms (about 24 days)
     * @param timeout        for the whole connect, until ESTABLISHED; positive; longer than {@code Long.MAX_VALUE}
     *                       nanoseconds (about 292 years) is taken as that, no deadline in practice
     * @return completes with the connection when ESTABLISHED, or exceptionally with a {@link CmException},
     *         a {@link TimeoutException} or a {@link VerbsException}; or with an {@link IllegalArgumentException}
     *         (a timeout not positive, private data too long) before anything is created
     */
    public static CompletableFuture<CmConnection> connectAsync(CmEventChannel channel, InetSocketAddress source,
            InetSocketAddress peer, ConnectionSetup setup, byte[] privateData, Duration resolveTimeout,
            Duration timeout) {
        if (timeout.isNegative() || timeout.isZero() || resolveTimeout.isNegative() || resolveTimeout.isZero()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "connect timeouts must be positive: " + resolveTimeout + ", " + timeout));
        }
        if (privateData.length > PrivateData.CONNECT) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("rdma_cm private data is at most "
                    + PrivateData.CONNECT + " bytes on connect: " + privateData.length));
        }
        // every conversion before the id exists: a huge Duration once overflowed after it (issue 29)
        Duration whole = Timeouts.clamp(timeout);
        int resolveMs = Timeouts.intMillis(resolveTimeout);
        long nanos = nanos(whole);
        CmConnection c;
        try {
            c = new CmConnection(channel, CmId.create(channel, "CmConnection(connect to " + peer + ")"),
                    "connect to " + peer);
        } catch (VerbsException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        c.setup = setup;
        c.myPrivateData = PrivateData.frame(privateData, PrivateData.CONNECT);
        c.timeout = whole;
        c.resolveTimeoutMs = resolveMs;
        c.deadlineNanos = System.nanoTime() + nanos;
        try {
            c.deadline = Deadlines.SCHEDULER.schedule(c::deadlinePassed, nanos, TimeUnit.NANOSECONDS);
            if (source != null) {
                c.id.run("rdma_bind_addr", i -> RdmaCm.bindAddr(i, source));
            }
            c.id.run("rdma_resolve_addr", i -> RdmaCm.resolveAddr(i, peer, c.stepTimeoutMs()));
        } catch (VerbsException | RuntimeException e) {
            c.abort(e);
        }
        return c.established;
    }

    /** The timer thread of connect deadlines: it only hands each expiry to the connection's engine. */
    static final class Deadlines {
        static final ScheduledThreadPoolExecutor SCHEDULER = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rdma4j-cm-deadlines");
            t.setDaemon(true);
            return t;
        });

        static {
            SCHEDULER.setRemoveOnCancelPolicy(true); // a settled connect leaves nothing behind
        }
    }

    /** The duration in nanoseconds, at most about 73 years (no overflow in deadline arithmetic). */
    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(Long.MAX_VALUE / 4)) > 0 ? Long.MAX_VALUE / 4 : d.toNanos();
    }

    /** A resolution step's {@code timeout_ms}: the per-step timeout, within what is left of the deadline. */
    private int stepTimeoutMs() {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        return (int) Math.max(1, Math.min(resolveTimeoutMs, left));
    }

    /**
     * On the timer thread: the attempt is cancelled on the engine thread, where the id's events are handled,
     * so that no handler is half-way through a step as the id goes (the id's guard would refuse its calls
     * anyway). If the engine no longer runs tasks, here.
     */
    private void deadlinePassed() {
        if (settled.get()) {
            return;
        }
        try {
            channel.engine().execute(this::timedOut);
        } catch (RejectedExecutionException e) {
            timedOut();
        }
    }

    private void timedOut() {
        abort(new TimeoutException(what + " timed out after " + describe(timeout) + ", waiting for " + stage
                + "; the attempt was cancelled and its rdma_cm id destroyed"));
    }

    private static String describe(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    /** The setup's {@link ConnectionSetup#rnrRetryCount()}, checked. */
    private static int rnrRetryCount(ConnectionSetup setup) {
        int n = setup.rnrRetryCount();
        if (n < 0 || n > 7) {
            throw new IllegalArgumentException("ConnectionSetup.rnrRetryCount() must be 0 to 7: " + n);
        }
        return n;
    }

    /** The setup's {@link ConnectionSetup#retryCount()}, checked. */
    private static int retryCount(ConnectionSetup setup) {
        int n = setup.retryCount();
        if (n < 0 || n > 7) {
            throw new IllegalArgumentException("ConnectionSetup.retryCount() must be 0 to 7: " + n);
        }
        return n;
    }

    /** The setup's read depth, within what the connection's device allows. */
    private int readDepth(ConnectionSetup setup) throws VerbsException {
        int n = setup.readDepth();
        if (n < 0 || n > 255) {
            throw new IllegalArgumentException("ConnectionSetup.readDepth() must be 0 to 255: " + n);
        }
        if (n <= 1) {
            return n;
        }
        dev.rdma4j.DeviceAttributes d = context.queryDevice();
        return Math.min(n, Math.min(d.maxQpRdAtom(), d.maxQpInitRdAtom()));
    }

    static CompletableFuture<CmConnection> accepted(CmEventChannel channel, CmId id, ConnectionSetup setup,
            byte[] privateData, byte[] peerData) {
        CmConnection c = new CmConnection(channel, id, "accept");
        c.peerPrivateData = peerData;
        byte[] framed = PrivateData.frame(privateData, PrivateData.ACCEPT);
        try {
            c.createQueuePair(setup);
            setup.beforeConnect(c.queuePair);
            int depth = c.readDepth(setup);
            c.id.run("rdma_accept", i -> {
                try (Arena a = Arena.ofConfined()) {
                    RdmaCm.accept(i, RdmaCm.connParam(a, framed, depth, depth, retryCount(setup),
                            rnrRetryCount(setup)));
                }
            });
        } catch (VerbsException | RuntimeException e) {
            c.abort(e);
        }
        return c.established;
    }

    /**
     * {@code setup} (user code: not counted as a call on the id, so it may take any time and call anything),
     * then {@code rdma_create_qp}, counted until the queue pair is assigned: a close waits for it and then
     * closes the queue pair before destroying the id. librdmacm leaves the new QP in INIT.
     */
    private void createQueuePair(ConnectionSetup s) throws VerbsException {
        context = channel.contextOf(id);
        QueuePairBuilder b = s.configure(context);
        id.run("rdma_create_qp", i -> queuePair = Access.get().createQueuePair(b, new dev.rdma4j.internal.QpVerbs() {
            @Override
            public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws NativeException {
                return RdmaCm.createQp(i, pd, initAttr);
            }

            @Override
            public void destroy(MemorySegment qp) throws VerbsException {
                // the id outlives its queue pair: close() closes the QP before rdma_destroy_id
                try {
                    id.runWhileClosing("rdma_destroy_qp", RdmaCm::destroyQp);
                } finally {
                    queuePairDestroyed = true;
                }
            }
        }));
        Access.get().stateChanged(queuePair, QpState.INIT);
    }

    /**
     * Adds a listener for every rdma_cm event of this connection's id (route resolution, ESTABLISHED,
     * DISCONNECTED, ...), as typed values.
     *
     * @param listener called on the engine thread, after rdma4j handled the event
     */
    public void addEventListener(java.util.function.Consumer<CmEvent> listener) {
        listeners.add(listener);
    }

    private void onEvent(RdmaCm.Event e) {
        try {
            handle(e);
        } finally {
            CmEvent value = new CmEvent(CmEventType.of(e.type()), e.status(), e.privateData());
            listeners.forEach(l -> l.accept(value));
        }
    }

    private void handle(RdmaCm.Event e) {
        CmEventType type = CmEventType.of(e.type());
        try {
            switch (type) {
                case ADDR_RESOLVED -> {
                    stage = "route resolution (rdma_resolve_route)";
                    id.run("rdma_resolve_route", i -> RdmaCm.resolveRoute(i, stepTimeoutMs()));
                }
                case ROUTE_RESOLVED -> {
                    stage = "the queue pair's set-up";
                    createQueuePair(setup);
                    setup.beforeConnect(queuePair);
                    byte[] late = setup.connectPrivateData(queuePair);
                    if (late != null) {
                        if (late.length > PrivateData.CONNECT) {
                            throw new IllegalArgumentException("rdma_cm private data is at most "
                                    + PrivateData.CONNECT + " bytes on connect: " + late.length);
                        }
                        myPrivateData = PrivateData.frame(late, PrivateData.CONNECT);
                    }
                    int depth = readDepth(setup);
                    stage = "the peer's answer to the connect request (rdma_connect): no host at that address,"
                            + " or it does not answer";
                    id.run("rdma_connect", i -> {
                        try (Arena a = Arena.ofConfined()) {
                            RdmaCm.connect(i, RdmaCm.connParam(a, myPrivateData, depth, depth, retryCount(setup),
                                    rnrRetryCount(setup)));
                        }
                    });
                }
                case ESTABLISHED -> {
                    if (setup != null) { // the active side: the accept's private data (the passive side's
                        // ESTABLISHED carries none of the peer's; its request's data was kept at creation)
                        peerPrivateData = PrivateData.unframe(e.privateData());
                    }
                    if (settled.compareAndSet(false, true)) {
                        cancelDeadline();
                        Access.get().stateChanged(queuePair, QpState.RTS);
                        established.complete(this);
                    }
                }
                case DISCONNECTED -> {
                    if (!disconnecting.getAndSet(true)) {
                        // the peer disconnected: answer its DREQ at once (as rping does), or the peer's
                        // rdma_disconnect waits for the DREQ timeout; this also moves our QP to ERROR
                        try {
                            id.run("rdma_disconnect", RdmaCm::disconnect);
                        } catch (VerbsException | IllegalStateException ignored) {
                            // already disconnected by the CM, or being closed (rdma_destroy_id disconnects)
                        }
                    }
                    if (queuePair != null) {
                        Access.get().stateChanged(queuePair, QpState.ERROR);
                    }
                    disconnected.complete(null);
                }
                case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL ->
                    abort(new CmException(what, type, e.status(), PrivateData.unframe(e.privateData())));
                default -> {
                }
            }
        } catch (VerbsException | RuntimeException ex) {
            abort(ex);
        }
    }

    /**
     * Close first, then fail the future: whoever waits on it may close the PD/CQs right away. Only the first
     * outcome counts (a deadline racing ESTABLISHED or an error event).
     */
    private void abort(Throwable t) {
        if (settled.compareAndSet(false, true)) {
            cancelDeadline();
            try {
                close();
            } catch (RuntimeException e) {
                t.addSuppressed(e);
            }
            established.completeExceptionally(t);
        }
    }

    private void cancelDeadline() {
        ScheduledFuture<?> d = deadline;
        if (d != null) {
            d.cancel(false);
        }
    }

    /**
     * The connection's queue pair, in RTS once established. The connection owns it ({@link #close()}
     * destroys it); wrap it in an {@code AsyncQueuePair} for futures, and close the wrapper, the
     * connection, or both, in either order (see the class comment).
     *
     * @return the queue pair (created by {@code rdma_create_qp})
     */
    public QueuePair queuePair() {
        return queuePair;
    }

    /**
     * The device context the connection goes through.
     *
     * @return the context (owned by the event channel)
     */
    public Context context() {
        return context;
    }

    /**
     * This side's address ({@code rdma_get_local_addr}).
     *
     * @return the address and port
     * @throws IllegalStateException if the connection is closed
     */
    public InetSocketAddress localAddress() {
        try {
            return id.call("rdma_get_local_addr", RdmaCm::localAddress);
        } catch (VerbsException e) {
            throw new AssertionError(e); // reads the id: no verb to fail
        }
    }

    /**
     * The peer's address ({@code rdma_get_peer_addr}).
     *
     * @return the address and port
     * @throws IllegalStateException if the connection is closed
     */
    public InetSocketAddress peerAddress() {
        try {
            return id.call("rdma_get_peer_addr", RdmaCm::peerAddress);
        } catch (VerbsException e) {
            throw new AssertionError(e); // reads the id: no verb to fail
        }
    }

    /**
     * The private data the peer sent: its connect request's (passive side) or its accept's (active side).
     * From an rdma4j peer, exactly the bytes it passed; from another peer, what the CM delivered (on
     * InfiniBand/RoCE zero-padded to 56 bytes for a request, 196 for an accept). See the class comment.
     *
     * @return a copy, possibly empty
     */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /**
     * Disconnects ({@code rdma_disconnect}): the queue pair goes to ERROR and both sides get DISCONNECTED.
     * Does nothing if this side already disconnected or answered the peer's disconnect.
     *
     * @throws VerbsException        if the verb fails
     * @throws IllegalStateException if the connection is closed (or being closed)
     */
    public void disconnect() throws VerbsException {
        id.ensureOpen("rdma_disconnect");
        if (!disconnecting.getAndSet(true)) {
            id.run("rdma_disconnect", RdmaCm::disconnect);
            QueuePair qp = queuePair;
            if (qp != null) {
                Access.get().stateChanged(qp, QpState.ERROR);
            }
        }
    }

    /**
     * Completes when either side disconnected ({@code RDMA_CM_EVENT_DISCONNECTED}).
     *
     * @return the future
     */
    public CompletableFuture<Void> disconnectedAsync() {
        return disconnected;
    }

    /**
     * Destroys the queue pair ({@code rdma_destroy_qp}) and the id ({@code rdma_destroy_id}), which
     * disconnects a connected peer. First refuses new calls on the id, then waits for those in progress
     * (on the engine thread or other callers' threads) to return. Idempotent; a close racing another
     * thread's waits for its outcome. {@link #disconnectedAsync()} completes. An {@code AsyncQueuePair}
     * wrapping the queue pair is torn down with it (its pending futures fail); if the wrapper was closed
     * first, the queue pair is already gone and only the id is destroyed.
     *
     * @throws IllegalStateException if the queue pair cannot be closed ({@code rdma_destroy_qp} failed, or it
     *                               is closed from within one of its own calls): the connection then stays
     *                               open, and a later close tries again
     */
    @Override
    public void close() {
        try {
            id.close(() -> {
                QueuePair qp = queuePair;
                if (qp != null) {
                    qp.close();
                    // a close of the queue pair on another thread marks it closed before it destroys it, and returns
                    // this close at once: its rdma_destroy_qp needs the id, which must outlive it. It takes no lock
                    // this thread may hold (the queue pair's post and poll locks, the channel's event lock, the id's)
                    int spins = 0;
                    while (!queuePairDestroyed) {
                        spins = dev.rdma4j.internal.BackOff.step(spins);
                    }
                }
            });
        } finally {
            if (id.isClosed()) {
                disconnected.complete(null);
            }
        }
    }

    /**
     * Whether {@link #close()} has completed.
     *
     * @return {@code true} once the id is destroyed
     */
    public boolean isClosed() {
        return id.isClosed();
    }

    @Override
    public String toString() {
        return id.owner() + (id.isClosed() ? " (closed)" : "");
    }
}
