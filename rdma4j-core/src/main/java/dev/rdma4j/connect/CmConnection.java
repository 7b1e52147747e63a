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
 */
public final class CmConnection implements AutoCloseable {
    private final CmEventChannel channel;
    private final MemorySegment id;
    private final String what;
    private final CompletableFuture<CmConnection> established = new CompletableFuture<>();
    private final CompletableFuture<Void> disconnected = new CompletableFuture<>();
    private final AtomicBoolean closed = new AtomicBoolean();
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

    private CmConnection(CmEventChannel channel, MemorySegment id, String what) {
        this.channel = channel;
        this.id = id;
        this.what = what;
        channel.register(id, this::onEvent);
    }

    /**
     * Connects to a listening peer: {@code rdma_resolve_addr}, {@code rdma_resolve_route}, the queue pair
     * from {@code setup} ({@code rdma_create_qp}), then {@code rdma_connect} with {@code privateData}.
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
        if (privateData.length > 56) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "rdma_cm private data is at most 56 bytes on connect: " + privateData.length));
        }
        CmConnection c;
        try {
            c = new CmConnection(channel, RdmaCm.createId(channel.handle()), "connect to " + peer);
        } catch (VerbsException e) {
            return CompletableFuture.failedFuture(e);
        }
        c.setup = setup;
        c.myPrivateData = privateData.clone();
        c.timeoutMs = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        try {
            RdmaCm.resolveAddr(c.id, peer, c.timeoutMs);
        } catch (VerbsException | RuntimeException e) {
            c.abort(e);
        }
        return c.established;
    }

    static CompletableFuture<CmConnection> accepted(CmEventChannel channel, MemorySegment id, ConnectionSetup setup,
            byte[] privateData, byte[] peerData) {
        CmConnection c = new CmConnection(channel, id, "accept");
        c.peerPrivateData = peerData;
        try {
            c.createQueuePair(setup);
            try (Arena a = Arena.ofConfined()) {
                RdmaCm.accept(id, RdmaCm.connParam(a, privateData, 1, 1, 7, 7));
            }
        } catch (VerbsException | RuntimeException e) {
            c.abort(e);
        }
        return c.established;
    }

    private void createQueuePair(ConnectionSetup s) throws VerbsException {
        context = channel.contextOf(id);
        QueuePair.Builder b = s.configure(context);
        queuePair = Access.get().createQueuePair(b, new Access.QpVerbs() {
            @Override
            public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws VerbsException {
                return RdmaCm.createQp(id, pd, initAttr);
            }

            @Override
            public void destroy(MemorySegment qp) {
                RdmaCm.destroyQp(id);
            }
        });
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
                case ADDR_RESOLVED -> RdmaCm.resolveRoute(id, timeoutMs);
                case ROUTE_RESOLVED -> {
                    createQueuePair(setup);
                    try (Arena a = Arena.ofConfined()) {
                        RdmaCm.connect(id, RdmaCm.connParam(a, myPrivateData, 1, 1, 7, 7));
                    }
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
                            RdmaCm.disconnect(id);
                        } catch (VerbsException ignored) {
                            // already disconnected by the CM
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
     * The private data the peer sent: its connect request's (passive side) or its accept's (active side).
     *
     * @return a copy, possibly empty
     */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /**
     * Disconnects ({@code rdma_disconnect}): the queue pair goes to ERROR and both sides get DISCONNECTED.
     *
     * @throws VerbsException if the verb fails
     */
    public void disconnect() throws VerbsException {
        if (!disconnecting.getAndSet(true)) {
            RdmaCm.disconnect(id);
            if (queuePair != null) {
                Access.get().stateChanged(queuePair, QpState.ERROR);
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
     * Destroys the queue pair ({@code rdma_destroy_qp}) and the id ({@code rdma_destroy_id}). Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        channel.unregister(id);
        try {
            if (queuePair != null) {
                queuePair.close();
            }
        } finally {
            try {
                RdmaCm.destroyId(id);
            } catch (VerbsException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
            disconnected.complete(null);
        }
    }
}
