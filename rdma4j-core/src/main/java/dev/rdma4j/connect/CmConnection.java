package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.Access;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connected rdma_cm id with its ready {@link QueuePair} (RTS). Both sides see a disconnect by either
 * one in {@link #disconnected()}. Close it before the PD/CQs its queue pair uses.
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
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<CmEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile QueuePair queuePair;
    private volatile Context context;
    private volatile byte[] peerPrivateData = new byte[0];
    // active side only
    private ConnectionSetup setup;
    private byte[] myPrivateData;
    private int timeoutMs;

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
     * @param channel     the event channel
     * @param peer        the peer's address and port
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's connection request, at most 56 bytes
     * @param timeout     for address and route resolution each
     * @return completes with the connection when ESTABLISHED, or exceptionally with a {@link CmException}
     *         (rejected, unreachable, ...) or {@link VerbsException}
     */
    public static CompletableFuture<CmConnection> connect(CmEventChannel channel, InetSocketAddress peer,
            ConnectionSetup setup, byte[] privateData, Duration timeout) {
        return connect(channel, null, peer, setup, privateData, timeout);
    }

    /**
     * Connects to a listening peer from a chosen source address (rping's {@code -I}): {@code rdma_bind_addr}
     * to {@code source}, then as {@link #connect(CmEventChannel, InetSocketAddress, ConnectionSetup, byte[],
     * Duration)}.
     *
     * @param channel     the event channel
     * @param source      the local address to bind to, port 0 for any; {@code null} to let the route pick
     * @param peer        the peer's address and port
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's connection request, at most 56 bytes
     * @param timeout     for address and route resolution each
     * @return completes with the connection when ESTABLISHED, or exceptionally with a {@link CmException}
     *         (rejected, unreachable, ...) or {@link VerbsException} ({@code rdma_bind_addr} with
     *         {@code EADDRNOTAVAIL} for an address this host does not have)
     */
    public static CompletableFuture<CmConnection> connect(CmEventChannel channel, InetSocketAddress source,
            InetSocketAddress peer, ConnectionSetup setup, byte[] privateData, Duration timeout) {
        if (privateData.length > 56) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "rdma_cm private data is at most 56 bytes on connect: " + privateData.length));
        }
        CmConnection c;
        try {
            c = new CmConnection(channel, CmId.create(channel, "CmConnection(connect to " + peer + ")"),
                    "connect to " + peer);
        } catch (VerbsException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        c.setup = setup;
        c.myPrivateData = privateData.clone();
        c.timeoutMs = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        try {
            if (source != null) {
                c.id.run("rdma_bind_addr", i -> RdmaCm.bindAddr(i, source));
            }
            c.id.run("rdma_resolve_addr", i -> RdmaCm.resolveAddr(i, peer, c.timeoutMs));
        } catch (VerbsException | RuntimeException e) {
            c.abort(e);
        }
        return c.established;
    }

    static CompletableFuture<CmConnection> accepted(CmEventChannel channel, CmId id, ConnectionSetup setup,
            byte[] privateData, byte[] peerData) {
        CmConnection c = new CmConnection(channel, id, "accept");
        c.peerPrivateData = peerData;
        try {
            c.createQueuePair(setup);
            setup.beforeConnect(c.queuePair);
            c.id.run("rdma_accept", i -> {
                try (Arena a = Arena.ofConfined()) {
                    RdmaCm.accept(i, RdmaCm.connParam(a, privateData, 1, 1, 7, 7));
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
        QueuePair.Builder b = s.configure(context);
        id.run("rdma_create_qp", i -> queuePair = Access.get().createQueuePair(b, new Access.QpVerbs() {
            @Override
            public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws VerbsException {
                return RdmaCm.createQp(i, pd, initAttr);
            }

            @Override
            public void destroy(MemorySegment qp) throws VerbsException {
                // the id outlives its queue pair: close() closes the QP before rdma_destroy_id
                id.runWhileClosing("rdma_destroy_qp", RdmaCm::destroyQp);
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
                case ADDR_RESOLVED -> id.run("rdma_resolve_route", i -> RdmaCm.resolveRoute(i, timeoutMs));
                case ROUTE_RESOLVED -> {
                    createQueuePair(setup);
                    setup.beforeConnect(queuePair);
                    id.run("rdma_connect", i -> {
                        try (Arena a = Arena.ofConfined()) {
                            RdmaCm.connect(i, RdmaCm.connParam(a, myPrivateData, 1, 1, 7, 7));
                        }
                    });
                }
                case ESTABLISHED -> {
                    if (e.privateData().length > 0) {
                        peerPrivateData = e.privateData();
                    }
                    Access.get().stateChanged(queuePair, QpState.RTS);
                    established.complete(this);
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
                    abort(new CmException(what, type, e.status(), e.privateData()));
                default -> {
                }
            }
        } catch (VerbsException | RuntimeException ex) {
            abort(ex);
        }
    }

    /** Close first, then fail the future: whoever waits on it may close the PD/CQs right away. */
    private void abort(Throwable t) {
        if (!established.isDone()) {
            try {
                close();
            } catch (RuntimeException e) {
                t.addSuppressed(e);
            }
            established.completeExceptionally(t);
        }
    }

    /**
     * The connection's queue pair, in RTS once established.
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
    public CompletableFuture<Void> disconnected() {
        return disconnected;
    }

    /**
     * Destroys the queue pair ({@code rdma_destroy_qp}) and the id ({@code rdma_destroy_id}), which
     * disconnects a connected peer. First refuses new calls on the id, then waits for those in progress
     * (on the engine thread or other callers' threads) to return. Idempotent; a close racing another
     * thread's waits for its outcome. {@link #disconnected()} completes.
     *
     * @throws IllegalStateException if the queue pair cannot be closed (e.g. an {@code AsyncQueuePair}
     *                               still holds posted work requests): the connection then stays open,
     *                               and a later close tries again
     */
    @Override
    public void close() {
        try {
            id.close(() -> {
                QueuePair qp = queuePair;
                if (qp != null) {
                    qp.close();
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
