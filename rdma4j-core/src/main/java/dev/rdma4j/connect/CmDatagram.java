package dev.rdma4j.connect;

import dev.rdma4j.AddressHandle;
import dev.rdma4j.Context;
import dev.rdma4j.Gid;
import dev.rdma4j.QpState;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.UdDestination;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.Timeouts;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.ffi.AhSrqCqAttrs;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * An rdma_cm id of the UDP port space ({@code RDMA_PS_UDP}) with its UD {@link QueuePair}: datagrams to a peer that
 * rdma_cm resolved, to the clients of a UD listener, and to multicast groups. rdma_cm moves the queue pair to RTS as
 * it creates it ({@code rdma_create_qp}), with the Q_Key {@link #QKEY}; no connection exists, so nothing is ever
 * disconnected: the peer's address handle, queue pair number and Q_Key are all a sender needs.
 *
 * <p>Three ways to get one:
 * <ul>
 * <li>{@link #connectAsync}: {@code rdma_resolve_addr}, {@code rdma_resolve_route}, {@code rdma_create_qp}, then
 * {@code rdma_connect}, which for a UDP id is a service ID resolution (SIDR): the listener answers with its queue
 * pair's number and Q_Key, and the ESTABLISHED event's {@code struct rdma_ud_param} gives {@link #peer()} (an
 * address handle made from its {@code ah_attr}). As rdma-core's {@code udaddy} client.</li>
 * <li>{@link CmConnectionRequest#acceptDatagramAsync} on a request of a {@link CmListener} listening in
 * {@link CmPortSpace#UDP}: {@code rdma_create_qp} and {@code rdma_accept} with its number; the client is known by
 * its first datagram ({@code ProtectionDomain.createAddressHandle(WorkCompletion, ...)}, {@code
 * ibv_create_ah_from_wc}). As {@code udaddy}'s server.</li>
 * <li>{@link #openAsync}: {@code rdma_resolve_addr} to any address on the device (a multicast group's, as rdma-core's
 * {@code mckey} does), then {@code rdma_create_qp}; then {@link #joinMulticastAsync} joins groups.</li>
 * </ul>
 *
 * <p><b>Private data</b> goes as given, without rdma4j's trailer (see {@link CmConnection}): the CM pads it to 180
 * bytes in a resolution request and 136 in the answer, so a peer reads it with that padding.
 *
 * <p><b>Life cycle.</b> The datagram owns its queue pair and the address handles it made (the peer's, the groups');
 * {@link #close()} closes them, leaves the groups and destroys the id; close it before the PD and CQs its queue
 * pair uses.
 *
 * <p>Thread-safe. rdma_cm events are handled on the engine thread (resolution, {@code rdma_create_qp} and {@code
 * rdma_connect} on the active side, a group's join); the setup's methods run there on the active side and on the
 * caller's thread for {@link CmConnectionRequest#acceptDatagramAsync}. Every native call on the id is counted, and
 * {@link #close()} destroys the id once those in progress returned; a call after the close throws
 * {@link IllegalStateException}.
 */
public final class CmDatagram implements AutoCloseable {
    /** The Q_Key rdma_cm gives the queue pairs of its UDP port space ({@code RDMA_UDP_QKEY}). */
    public static final int QKEY = RdmaCm.RDMA_UDP_QKEY;
    /** The most private data of {@code rdma_connect} on a UDP id (a SIDR request's 216 bytes less rdma_cm's 36). */
    public static final int CONNECT_PRIVATE_DATA = 180;
    /** The most private data of {@code rdma_accept} on a UDP id (a SIDR reply's). */
    public static final int ACCEPT_PRIVATE_DATA = 136;

    private final CmEventChannel channel;
    private final CmId id;
    private final String what;
    private final CompletableFuture<CmDatagram> ready = new CompletableFuture<>();
    private final AtomicBoolean settled = new AtomicBoolean();
    private final CopyOnWriteArrayList<Consumer<CmEvent>> listeners = new CopyOnWriteArrayList<>();
    /** The groups joined or being joined, by the token their join gave librdmacm as context. */
    private final Map<Long, MulticastGroup> groups = new ConcurrentHashMap<>();
    private final AtomicLong tokens = new AtomicLong();
    private volatile QueuePair queuePair;
    /** Set once the queue pair's destruction ({@code rdma_destroy_qp}, through its close) has returned. */
    private volatile boolean queuePairDestroyed;
    private volatile Context context;
    private volatile UdDestination peer;
    private volatile byte[] peerPrivateData = new byte[0];
    // active side only: written by the caller before rdma_resolve_addr, read on the engine thread
    private volatile ConnectionSetup setup;
    /** What {@code rdma_connect} sends; null for {@link #openAsync}, which resolves the address only. */
    private volatile byte[] myPrivateData;
    private volatile int resolveTimeoutMs;
    private volatile long deadlineNanos;
    private volatile Duration timeout;
    private volatile ScheduledFuture<?> deadline;
    private volatile String stage = "address resolution (rdma_resolve_addr)";

    private CmDatagram(CmEventChannel channel, CmId id, String what) {
        this.channel = channel;
        this.id = id;
        this.what = what;
        id.owner("CmDatagram(" + what + ")");
        channel.register(id, (e, request) -> onEvent(e));
    }

    /**
     * Resolves a UD peer listening on {@code server} (SIDR): {@code rdma_resolve_addr}, {@code rdma_resolve_route},
     * the queue pair from {@code setup} ({@code rdma_create_qp}, then {@link ConnectionSetup#beforeConnect}: post the
     * receives of the peer's answers there), then {@code rdma_connect}.
     *
     * @param channel        the event channel
     * @param source         the local address to bind to ({@code rdma_bind_addr}), port 0 for any; {@code null} to
     *                       let the route pick
     * @param server         the listener's address and port
     * @param setup          the queue pair's PD, CQs and capacities: a builder of type {@link QpType#UD}
     * @param privateData    for the listener's request, at most {@link #CONNECT_PRIVATE_DATA} bytes
     * @param resolveTimeout for address and route resolution each ({@code timeout_ms}, rdma-core's tools: 2 s)
     * @param timeout        for the whole resolution, until ESTABLISHED
     * @return completes with the datagram and its {@link #peer()} when ESTABLISHED, or exceptionally with a
     *         {@link CmException} (the listener rejected: {@code UNREACHABLE} with the SIDR status; no route; ...), a
     *         {@link TimeoutException} or a {@link VerbsException}; or with an {@link IllegalArgumentException}
     *         (a timeout not positive, private data too long, a setup not UD)
     */
    public static CompletableFuture<CmDatagram> connectAsync(CmEventChannel channel, InetSocketAddress source,
            InetSocketAddress server, ConnectionSetup setup, byte[] privateData, Duration resolveTimeout,
            Duration timeout) {
        if (privateData.length > CONNECT_PRIVATE_DATA) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("rdma_cm private data is at most "
                    + CONNECT_PRIVATE_DATA + " bytes on a UD connect: " + privateData.length));
        }
        return start(channel, source, server, setup, privateData.clone(), resolveTimeout, timeout,
                "resolve " + server);
    }

    /**
     * Resolves {@code address} to a device ({@code rdma_resolve_addr}, after {@code rdma_bind_addr} to
     * {@code source}) and creates the queue pair there ({@code rdma_create_qp}), without a peer: for multicast
     * ({@link #joinMulticastAsync}), as rdma-core's {@code mckey} resolves the group's address.
     *
     * @param channel        the event channel
     * @param source         the local address to bind to, port 0 for any; {@code null} to let the route pick (a
     *                       multicast address usually has no route: give the device's address)
     * @param address        the address to resolve, e.g. the multicast group's
     * @param setup          the queue pair's PD, CQs and capacities: a builder of type {@link QpType#UD}
     * @param resolveTimeout for the address resolution
     * @param timeout        for the whole opening
     * @return completes with the datagram when its queue pair exists (RTS), or exceptionally as
     *         {@link #connectAsync}'s
     */
    public static CompletableFuture<CmDatagram> openAsync(CmEventChannel channel, InetSocketAddress source,
            InetAddress address, ConnectionSetup setup, Duration resolveTimeout, Duration timeout) {
        return start(channel, source, new InetSocketAddress(address, 0), setup, null, resolveTimeout, timeout,
                "open for " + address.getHostAddress());
    }

    private static CompletableFuture<CmDatagram> start(CmEventChannel channel, InetSocketAddress source,
            InetSocketAddress target, ConnectionSetup setup, byte[] privateData, Duration resolveTimeout,
            Duration timeout, String what) {
        if (timeout.isNegative() || timeout.isZero() || resolveTimeout.isNegative() || resolveTimeout.isZero()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "timeouts must be positive: " + resolveTimeout + ", " + timeout));
        }
        java.util.Objects.requireNonNull(setup, "setup");
        Duration whole = Timeouts.clamp(timeout);
        int resolveMs = Timeouts.intMillis(resolveTimeout);
        long nanos = whole.compareTo(Duration.ofNanos(Long.MAX_VALUE / 4)) > 0 ? Long.MAX_VALUE / 4 : whole.toNanos();
        CmDatagram d;
        try {
            d = new CmDatagram(channel, CmId.create(channel, "CmDatagram(" + what + ")", CmPortSpace.UDP), what);
        } catch (VerbsException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        d.setup = setup;
        d.myPrivateData = privateData;
        d.timeout = whole;
        d.resolveTimeoutMs = resolveMs;
        d.deadlineNanos = System.nanoTime() + nanos;
        try {
            d.deadline = CmConnection.Deadlines.SCHEDULER.schedule(d::deadlinePassed, nanos, TimeUnit.NANOSECONDS);
            if (source != null) {
                d.id.run("rdma_bind_addr", i -> RdmaCm.bindAddr(i, source));
            }
            d.id.run("rdma_resolve_addr", i -> RdmaCm.resolveAddr(i, target, d.stepTimeoutMs()));
        } catch (VerbsException | RuntimeException e) {
            d.abort(e);
        }
        return d.ready;
    }

    /** The server side: the request's id, its queue pair created and {@code rdma_accept} called. */
    static CompletableFuture<CmDatagram> accepted(CmEventChannel channel, CmId id, ConnectionSetup setup,
            byte[] privateData, byte[] peerData) {
        CmDatagram d = new CmDatagram(channel, id, "accept");
        d.peerPrivateData = peerData;
        try {
            d.createQueuePair(setup);
            setup.beforeConnect(d.queuePair);
            d.id.run("rdma_accept", i -> {
                try (Arena a = Arena.ofConfined()) {
                    RdmaCm.accept(i, RdmaCm.connParam(a, privateData, 0, 0, 0, 0));
                }
            });
            d.settle();
        } catch (VerbsException | RuntimeException e) {
            d.abort(e);
        }
        return d.ready;
    }

    private int stepTimeoutMs() {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        return (int) Math.max(1, Math.min(resolveTimeoutMs, left));
    }

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
        long ms = timeout.toMillis();
        abort(new TimeoutException(what + " timed out after " + (ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms")
                + ", waiting for " + stage + "; the attempt was cancelled and its rdma_cm id destroyed"));
    }

    /** {@code setup}, then {@code rdma_create_qp}, which moves a UD queue pair to RTS (with {@link #QKEY}). */
    private void createQueuePair(ConnectionSetup s) throws VerbsException {
        context = channel.contextOf(id);
        QueuePairBuilder b = s.configure(context);
        if (b.type() != QpType.UD) {
            throw new IllegalArgumentException("a CmDatagram's queue pair is UD: the setup gave a " + b.type()
                    + " builder");
        }
        id.run("rdma_create_qp", i -> queuePair = Access.get().createQueuePair(b, new dev.rdma4j.internal.QpVerbs() {
            @Override
            public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws NativeException {
                return RdmaCm.createQp(i, pd, initAttr);
            }

            @Override
            public void destroy(MemorySegment qp) throws VerbsException {
                List<MulticastGroup> left = new ArrayList<>();
                try {
                    id.runWhileClosing("rdma_destroy_qp", i -> {
                        leaveAll(i, left);
                        RdmaCm.destroyQp(i);
                    });
                } finally {
                    queuePairDestroyed = true;
                }
                left.forEach(MulticastGroup::leftBeforeJoined); // outside the locks: futures run callbacks
            }
        }));
        Access.get().stateChanged(queuePair, QpState.RTS);
    }

    /**
     * {@code rdma_leave_multicast} for every group not yet left, under the id's lock and the channel's event lock
     * (no join event is then read and not yet acknowledged, which the call would wait for), before
     * {@code rdma_destroy_qp}: librdmacm attached the queue pair to the groups of full members
     * ({@code ibv_attach_mcast}), and the kernel refuses to destroy a queue pair that has attachments ({@code
     * EBUSY}), which {@code rdma_destroy_qp} ignores: the queue pair would stay in the kernel, and its CQs with it.
     */
    private void leaveAll(MemorySegment i, List<MulticastGroup> left) {
        for (MulticastGroup g : groups.values()) {
            if (!g.left) {
                g.left = true;
                left.add(g);
                try {
                    RdmaCm.leaveMulticast(i, g.socketAddress());
                } catch (NativeException e) { // e.g. a join not yet made (EADDRNOTAVAIL): nothing attached
                    System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.DEBUG, e.getMessage());
                }
            }
        }
    }

    /**
     * Adds a listener for every rdma_cm event of this id (resolution, ESTABLISHED, MULTICAST_JOIN, ...), as typed
     * values.
     *
     * @param listener called on the engine thread, after rdma4j handled the event
     */
    public void addEventListener(Consumer<CmEvent> listener) {
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
                    if (myPrivateData == null) { // openAsync: the device is known, no peer to resolve
                        stage = "the queue pair's set-up";
                        createQueuePair(setup);
                        setup.beforeConnect(queuePair);
                        settle();
                    } else {
                        stage = "route resolution (rdma_resolve_route)";
                        id.run("rdma_resolve_route", i -> RdmaCm.resolveRoute(i, stepTimeoutMs()));
                    }
                }
                case ROUTE_RESOLVED -> {
                    stage = "the queue pair's set-up";
                    createQueuePair(setup);
                    setup.beforeConnect(queuePair);
                    stage = "the listener's answer to the resolution request (rdma_connect, SIDR)";
                    id.run("rdma_connect", i -> {
                        try (Arena a = Arena.ofConfined()) {
                            RdmaCm.connect(i, RdmaCm.connParam(a, myPrivateData, 0, 0, 0, 0));
                        }
                    });
                }
                case ESTABLISHED -> {
                    if (!settled.get()) {
                        peerPrivateData = e.privateData();
                        peer = new UdDestination(createAddressHandle(e.ahAttr()), e.qpNum(), e.qkey());
                        settle();
                    }
                }
                case MULTICAST_JOIN, MULTICAST_ERROR -> {
                    MulticastGroup g = groups.get(e.context());
                    if (g != null) {
                        g.onEvent(type, e);
                    }
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

    /** {@code ibv_create_ah} on the queue pair's PD from a {@code struct ibv_ah_attr} rdma_cm delivered. */
    AddressHandle createAddressHandle(byte[] ahAttr) throws VerbsException {
        AhSrqCqAttrs.Ah a;
        try (Arena arena = Arena.ofConfined()) {
            a = AhSrqCqAttrs.decodeAh(arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, ahAttr));
        }
        return queuePair.protectionDomain().createAddressHandle(new AddressHandle.Attributes(a.port(), a.dlid(),
                a.serviceLevel(), a.global(), a.global() ? Gid.of(a.dgid()) : null, a.global() ? a.sgidIndex() : -1,
                a.hopLimit(), a.trafficClass(), a.flowLabel()));
    }

    private void settle() {
        if (settled.compareAndSet(false, true)) {
            ScheduledFuture<?> d = deadline;
            if (d != null) {
                d.cancel(false);
            }
            ready.complete(this);
        }
    }

    /** Close first, then fail the future; only the first outcome counts. */
    private void abort(Throwable t) {
        if (settled.compareAndSet(false, true)) {
            ScheduledFuture<?> d = deadline;
            if (d != null) {
                d.cancel(false);
            }
            try {
                close();
            } catch (RuntimeException e) {
                t.addSuppressed(e);
            }
            ready.completeExceptionally(t);
        } else if (t instanceof CmException) {
            System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING, t.getMessage());
        }
    }

    /**
     * Joins a multicast group ({@code rdma_join_multicast_ex}): the device attaches the queue pair to it
     * ({@code ibv_attach_mcast}, done by librdmacm as the MULTICAST_JOIN event arrives), and the group's
     * {@link MulticastGroup#destination()} sends to all its members. On RoCE v2 the kernel also joins the IP group
     * (IGMP) unless {@code sendOnly}.
     *
     * @param group    the group's address (IPv4 or IPv6 multicast)
     * @param sendOnly {@code RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER}: send to the group without receiving its
     *                 datagrams; else a full member ({@code RDMA_MC_JOIN_FLAG_FULLMEMBER})
     * @return completes on the engine thread with the group once joined (MULTICAST_JOIN), or exceptionally with a
     *         {@link CmException} (MULTICAST_ERROR), the {@link VerbsException} of the call, or an
     *         {@link IllegalStateException} if the datagram closed before the join completed
     * @throws IllegalStateException    if the datagram is not ready (no queue pair yet) or closed, or its queue pair
     *                                  is closed
     * @throws IllegalArgumentException if {@code group} is not a multicast address
     */
    public CompletableFuture<MulticastGroup> joinMulticastAsync(InetAddress group, boolean sendOnly) {
        if (!group.isMulticastAddress()) {
            throw new IllegalArgumentException("not a multicast address: " + group.getHostAddress());
        }
        QueuePair qp = queuePair;
        if (qp == null || qp.isClosed()) {
            throw new IllegalStateException(this + ": join a multicast group once the queue pair exists, and while it"
                    + " is open" + (qp == null ? "" : ": the queue pair is closed"));
        }
        long token = tokens.incrementAndGet();
        MulticastGroup g = new MulticastGroup(this, new InetSocketAddress(group, 0), sendOnly);
        groups.put(token, g);
        try {
            id.run("rdma_join_multicast_ex", i -> {
                if (g.left) { // the queue pair closed meanwhile and left the groups: this one is not made
                    throw new IllegalStateException(this + ": the queue pair closed during the join of "
                            + group.getHostAddress());
                }
                RdmaCm.joinMulticast(i, g.socketAddress(), sendOnly, token);
            });
        } catch (VerbsException e) {
            groups.remove(token);
            return CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            groups.remove(token);
            throw e;
        }
        return g.joined();
    }

    /**
     * Runs {@code c} counted as a call on the id, for what must not outlast the datagram's close: the handle a
     * MULTICAST_JOIN makes ({@code ibv_create_ah}) on the engine thread. A close waits for it, then closes what it
     * made; once a close began, {@link IllegalStateException}.
     */
    void whileOpen(String what, CmId.VoidCall c) throws VerbsException {
        id.run(what, c);
    }

    /**
     * {@code rdma_leave_multicast} for a group this datagram joined, unless the close of the queue pair or of the
     * datagram left it already; its handle is closed already. The group stays known until it is left, so that a
     * queue pair's close meanwhile leaves it ({@link #leaveAll}).
     */
    void leave(MulticastGroup g) throws VerbsException {
        try {
            if (!g.left) {
                id.run("rdma_leave_multicast", i -> {
                    if (!g.left) {
                        g.left = true;
                        RdmaCm.leaveMulticast(i, g.socketAddress());
                    }
                });
            }
        } finally {
            if (g.left) { // else refused by a close under way, whose queue pair's close (or its retry) leaves it
                groups.values().remove(g);
            }
        }
    }

    String what() {
        return id.owner();
    }

    /**
     * The queue pair (UD, in RTS once ready). The datagram owns it ({@link #close()} destroys it); an
     * {@code AsyncQueuePair} wrapping it may close it first. Its close leaves the multicast groups still joined
     * ({@code rdma_leave_multicast}, as {@link #close()} does), and later joins are refused.
     *
     * @return the queue pair, null before it is created
     */
    public QueuePair queuePair() {
        return queuePair;
    }

    /**
     * The device context the id is bound to.
     *
     * @return the context (owned by the event channel), null before the address is resolved
     */
    public Context context() {
        return context;
    }

    /**
     * The peer rdma_cm resolved ({@link #connectAsync}): the address handle made from the ESTABLISHED event's
     * {@code ah_attr}, the listener's queue pair number and Q_Key. Owned by this datagram.
     *
     * @return the peer; empty for an accepted or opened datagram
     */
    public Optional<UdDestination> peer() {
        return Optional.ofNullable(peer);
    }

    /**
     * The private data the peer sent: its request's (accepted side) or its answer's (active side), as the CM
     * delivered it (zero-padded to 180 or 136 bytes on InfiniBand and RoCE).
     *
     * @return a copy, possibly empty
     */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /**
     * This side's address ({@code rdma_get_local_addr}).
     *
     * @return the address and port
     * @throws IllegalStateException if the datagram is closed
     */
    public InetSocketAddress localAddress() {
        try {
            return id.call("rdma_get_local_addr", RdmaCm::localAddress);
        } catch (VerbsException e) {
            throw new AssertionError(e); // reads the id: no verb to fail
        }
    }

    /**
     * Closes the queue pair (the groups still joined are left first, {@code rdma_leave_multicast}: the kernel does
     * not destroy a queue pair attached to a group; then {@code rdma_destroy_qp}; its outstanding requests are
     * forgotten), the address handles this datagram made (the peer's, the groups') and the id
     * ({@code rdma_destroy_id}). Joins not yet complete fail with {@link IllegalStateException}; the groups' own
     * {@link MulticastGroup#close()} then has nothing left to do. Idempotent; a close racing another thread's waits
     * for its outcome.
     *
     * @throws IllegalStateException if a handle or the queue pair is still used by posted sends, or the queue pair
     *                               cannot be closed: the datagram then stays open, and a later close tries again
     */
    @Override
    public void close() {
        id.close(() -> {
            QueuePair qp = queuePair;
            if (qp != null) {
                qp.close(); // first: its outstanding sends (unsignaled ones too) pin the address handles
                // a close of the queue pair on another thread marks it closed before it destroys it, and returns
                // this close at once: its rdma_destroy_qp needs the id, which must outlive it. It takes no lock this
                // thread may hold (the queue pair's post and poll locks, the channel's event lock, the id's)
                int spins = 0;
                while (!queuePairDestroyed) {
                    spins = dev.rdma4j.internal.BackOff.step(spins);
                }
            }
            for (MulticastGroup g : groups.values()) {
                g.closeHandle();
            }
            UdDestination p = peer;
            if (p != null) {
                p.addressHandle().close();
            }
        });
        // rdma_destroy_id left the groups and dropped the join events not yet read: nothing else completes those
        for (MulticastGroup g : groups.values()) {
            g.left = true;
            g.closedBeforeJoined();
        }
        groups.clear();
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
