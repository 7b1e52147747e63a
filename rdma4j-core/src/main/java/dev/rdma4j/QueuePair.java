package dev.rdma4j;

import dev.rdma4j.internal.ffi.CConstants;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.Native;
import dev.rdma4j.internal.ffi.QpAttrs;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A queue pair ({@code struct ibv_qp}, from {@code ibv_create_qp}) of type RC, UC or UD, built with
 * {@link #builder(ProtectionDomain, QpType)}.
 *
 * <p><b>State machine.</b> {@link #toInit}, {@link #toRtr}, {@link #toRts} must come in that order from
 * RESET; a call out of order is refused with an {@link IllegalStateException} before
 * {@code ibv_modify_qp} runs. {@link #toError()} and {@link #reset()} work from any state. Every
 * transition has working defaults (see {@link InitAttributes}, {@link RtrAttributes},
 * {@link RtsAttributes}), all overridable.
 *
 * <p><b>Posting.</b> {@link #post(SendBatch)} and {@link #post(ReceiveBatch)} throw a
 * {@link VerbsException} when the verb refuses (queue full {@code ENOMEM}, too many SGEs or inline bytes
 * {@code EINVAL}, wrong state {@code EINVAL}); {@link #tryPost(SendBatch)} and
 * {@link #tryPost(ReceiveBatch)} return the same errno as a status instead (0 = posted), for hot paths.
 * A failed chained post reports the first request not posted in {@code batch.failedIndex()}. Posting
 * allocates nothing. Every posted request pins the regions (and address handle) it uses until its
 * completion is polled, or until the QP is reset or closed.
 *
 * <p>Closing destroys the QP ({@code ibv_destroy_qp}); its outstanding requests are forgotten and
 * their regions released, and completions of it still in a CQ are dropped by {@link CompletionQueue#poll}.
 *
 * <p>Threading: thread-safe. Posts on one direction are serialised by a lock held only around the provider call
 * (send and receive posts do not contend with each other); state transitions are serialised with each other;
 * none of its methods blocks on the device. Wrapped by an {@code AsyncQueuePair}, it refuses posts of its own
 * (the wrapper owns its wr_ids).
 */
public final class QueuePair extends NativeResource {
    /** UD receives start with this many bytes of GRH ({@link GlobalRouteHeader}). */
    public static final int UD_GRH_BYTES = GlobalRouteHeader.BYTES;

    private static final int EINVAL = CConstants.EINVAL;
    private static final int ENOMEM = dev.rdma4j.internal.ffi.Libc.ENOMEM;
    private static final int QUERY_ALL = CConstants.IBV_QP_QUERY_ALL;

    private final Context context;
    private final ProtectionDomain pd;
    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final MemorySegment handle;
    private final int qpNumber;
    private final QpCapabilities capabilities;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badSend = arena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment badRecv = arena.allocate(ValueLayout.ADDRESS);
    private final WorkRing sendRing;
    private final WorkRing recvRing;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock recvLock = new ReentrantLock();
    /**
     * Set under {@link #sendLock} and again under {@link #recvLock} before the QP is destroyed; the posts check it
     * under their lock instead of acquiring the life-cycle counter (no atomic read-modify-write per post).
     */
    private boolean destroyed;
    private final SendBatch oneSend;
    private final ReceiveBatch oneRecv;
    private volatile QpState state = QpState.RESET;
    private volatile int port = 1;
    private volatile int token;
    private volatile dev.rdma4j.internal.QpDriver driver;
    private final boolean signalAll;
    private final Completions completions = new Completions();
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<AsyncEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private final dev.rdma4j.internal.QpVerbs verbs;
    private final SharedReceiveQueue srq;

    QueuePair(QueuePairBuilder b, dev.rdma4j.internal.QpVerbs verbs) throws VerbsException {
        super("QueuePair(" + b.type + ")", b.pd);
        this.context = b.pd.context();
        this.pd = b.pd;
        this.type = b.type;
        this.sendCq = b.sendCq;
        this.recvCq = b.recvCq != null ? b.recvCq : b.sendCq;
        MemorySegment qp = null;
        QpCapabilities caps;
        int qpn;
        MemorySegment sendFn;
        MemorySegment recvFn;
        WorkRing sr;
        WorkRing rr;
        SendBatch os = null;
        ReceiveBatch or = null;
        int tok;
        try {
            sendCq.addDependent(this);
            try {
                recvCq.addDependent(this);
                if (b.srq != null) {
                    try {
                        b.srq.addDependent(this); // an SRQ cannot be destroyed while QPs are attached
                    } catch (RuntimeException e) {
                        recvCq.removeDependent(this);
                        throw e;
                    }
                }
            } catch (RuntimeException e) {
                sendCq.removeDependent(this);
                throw e;
            }
            try (Arena a = Arena.ofConfined()) {
                // with an SRQ the QP has no receive queue, and the verbs ignore the receive capacities; rxe then
                // neither checks nor sets them but hands back what it was given, so ask for none
                MemorySegment init = QpAttrs.init(a, sendCq.handle(), recvCq.handle(),
                        b.srq != null ? b.srq.handle() : null, b.maxSendWr, b.srq != null ? 0 : b.maxRecvWr,
                        b.maxSendSge, b.srq != null ? 0 : b.maxRecvSge, b.maxInlineData, type.code(), b.signalAll);
                try {
                    qp = verbs.create(pd.handle(), init);
                } catch (java.io.IOException e) {
                    throw QueuePairBuilder.verbsFailure(e);
                }
                // ibv_create_qp writes back what the device actually granted (u32s: checked before any is an int)
                caps = QueuePairBuilder.granted(init, b.srq != null);
                // everything made after the native QP is inside this cleanup path
                qpn = QpAttrs.qpNum(qp);
                sendFn = DataPath.op(context.handle(), DataPath.Op.POST_SEND);
                recvFn = DataPath.op(context.handle(), DataPath.Op.POST_RECV);
                // sized from the checked capabilities: none is negative, none above its bound (no overflow either)
                sr = new WorkRing(caps.maxSendWr(), caps.maxSendSge() + 1);
                rr = new WorkRing(caps.maxRecvWr(), Math.max(1, caps.maxRecvSge()));
                os = new SendBatch(1, Math.max(1, caps.maxSendSge()), Math.min(caps.maxInlineData(), 1 << 20));
                or = new ReceiveBatch(1, Math.max(1, caps.maxRecvSge()));
                if (b.afterCreate != null) {
                    b.afterCreate.run(); // tests: a failure of the Java side once the native QP exists
                }
                tok = WorkRequestIds.register(t -> completions); // refused when the registry is full
            } catch (VerbsException | RuntimeException | Error e) {
                if (os != null) {
                    os.close();
                }
                if (or != null) {
                    or.close();
                }
                if (qp != null) { // made, and the Java side failed: nothing may outlive the failed build
                    try {
                        verbs.destroy(qp);
                    } catch (java.io.IOException | RuntimeException d) {
                        e.addSuppressed(d);
                    }
                }
                sendCq.removeDependent(this);
                recvCq.removeDependent(this);
                if (b.srq != null) {
                    b.srq.removeDependent(this);
                }
                throw e;
            }
        } catch (VerbsException | RuntimeException | Error e) {
            arena.close();
            abandon();
            throw e;
        }
        this.verbs = verbs;
        this.srq = b.srq;
        this.signalAll = b.signalAll;
        this.handle = qp;
        this.capabilities = caps;
        this.qpNumber = qpn;
        this.postSendFn = sendFn;
        this.postRecvFn = recvFn;
        this.sendRing = sr;
        this.recvRing = rr;
        this.oneSend = os;
        this.oneRecv = or;
        this.token = tok;
        context.register(qp.address(), this); // a map entry: cannot fail
    }

    /**
     * Adds a listener for this queue pair's asynchronous events (fatal/access errors, last WQE reached, ...).
     *
     * @param listener called on the thread running {@link Context#processAsyncEvents()}
     */
    public void addEventListener(java.util.function.Consumer<AsyncEvent> listener) {
        listeners.add(listener);
    }

    /**
     * The next asynchronous event of this queue pair, as a future.
     *
     * @return completes when {@link Context#processAsyncEvents()} delivers one
     */
    public java.util.concurrent.CompletableFuture<AsyncEvent> nextEventAsync() {
        java.util.concurrent.CompletableFuture<AsyncEvent> f = new java.util.concurrent.CompletableFuture<>();
        java.util.function.Consumer<AsyncEvent> once = new java.util.function.Consumer<>() {
            @Override
            public void accept(AsyncEvent e) {
                listeners.remove(this);
                f.complete(e);
            }
        };
        listeners.add(once);
        return f;
    }

    void dispatch(AsyncEvent e) {
        context.notifyListeners(listeners, e);
    }

    /** rdma_cm moved the QP (connect, accept, disconnect). */
    void stateChanged(QpState s) {
        state = s;
    }

    /** See {@code Access.drive}. */
    synchronized void drive(dev.rdma4j.internal.QpDriver d) {
        ensureOpen();
        if (driver != null) {
            throw new IllegalStateException(this + " is already driven by an AsyncQueuePair");
        }
        driver = java.util.Objects.requireNonNull(d);
    }

    private void refuseIfDriven() {
        if (driver != null) {
            throw new IllegalStateException(this + " is driven by an AsyncQueuePair, which owns its wr_ids and"
                    + " completions: post through the AsyncQueuePair");
        }
    }

    /**
     * Starts building a queue pair ({@code ibv_create_qp}).
     *
     * @param pd   the protection domain
     * @param type RC, UC or UD
     * @return a builder with defaults: 16 send and 16 receive requests, 1 SGE each, no inline data
     */
    public static QueuePairBuilder builder(ProtectionDomain pd, QpType type) {
        return new QueuePairBuilder(Objects.requireNonNull(pd, "pd"), Objects.requireNonNull(type, "type"));
    }

    /**
     * The QP number ({@code ibv_qp.qp_num}) peers address.
     *
     * @return 24-bit number
     */
    public int qpNumber() {
        return qpNumber;
    }

    /**
     * Whether every send request completes with a completion, signaled or not ({@code sq_sig_all}, from
     * {@link QueuePairBuilder#signalAll(boolean)}).
     *
     * @return {@code true} if the QP signals all sends
     */
    public boolean signalsAll() {
        return signalAll;
    }

    /**
     * The CQ its send requests complete on ({@code ibv_qp.send_cq}).
     *
     * @return the send completion queue
     */
    public CompletionQueue sendCompletionQueue() {
        return sendCq;
    }

    /**
     * The CQ its receives complete on ({@code ibv_qp.recv_cq}); the send CQ when one was given for both.
     *
     * @return the receive completion queue
     */
    public CompletionQueue receiveCompletionQueue() {
        return recvCq;
    }

    /**
     * The transport type.
     *
     * @return RC, UC or UD
     */
    public QpType type() {
        return type;
    }

    /**
     * The queue sizes the device granted.
     *
     * @return the capabilities
     */
    public QpCapabilities capabilities() {
        return capabilities;
    }

    /**
     * The state as rdma4j last set it; the device may since have moved the QP to ERROR on its own,
     * which {@link #query()} shows.
     *
     * @return the state
     */
    public QpState state() {
        return state;
    }

    /**
     * The protection domain.
     *
     * @return the domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The port set by {@link #toInit}.
     *
     * @return the port number
     */
    public int port() {
        return port;
    }

    /**
     * RESET → INIT with default attributes ({@code ibv_modify_qp}).
     *
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in RESET, or closed
     */
    public void toInit() throws VerbsException {
        toInit(InitAttributes.builder().build());
    }

    /**
     * RESET → INIT ({@code ibv_modify_qp}: state, P_Key index, port, and access flags (RC/UC) or Q_Key (UD)).
     *
     * @param a the attributes
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in RESET, or closed
     */
    public synchronized void toInit(InitAttributes a) throws VerbsException {
        expect(QpState.RESET, QpState.INIT);
        modify(QpState.INIT, "RESET -> INIT", s -> QpAttrs.toInit(s, a.pkeyIndex(), a.port(), type == QpType.UD,
                a.qkey(), a.accessMask(type)));
        port = a.port();
    }

    /**
     * INIT → RTR for a connected (RC/UC) QP ({@code ibv_modify_qp}: state, address vector, path MTU,
     * dest QPN, RQ PSN, and for RC max_dest_rd_atomic and min_rnr_timer). The GRH is filled from the
     * remote GID on RoCE; the path MTU defaults to the smaller of the port's active MTU and the peer's.
     *
     * @param r the attributes
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in INIT, is UD (use {@link #toRtr()}), or closed
     */
    public synchronized void toRtr(RtrAttributes r) throws VerbsException {
        if (type == QpType.UD) {
            throw new IllegalStateException("a UD queue pair has no remote side: use toRtr()");
        }
        expect(QpState.INIT, QpState.RTR);
        PortAttributes p = context.queryPort(port);
        Mtu mtu = r.pathMtu() != null ? r.pathMtu() : p.activeMtu().min(r.remoteMtu());
        boolean global = r.global() != null ? r.global() : p.isRoce() || !r.remote().gid().isZero();
        int sgid = !global ? 0 : r.sgidIndex() >= 0 ? r.sgidIndex() : context.bestRoceGid(port).index();
        AddressHandle.Attributes av = new AddressHandle.Attributes(port, r.remote().lid(), r.serviceLevel(), global,
                r.remote().gid(), sgid, r.hopLimit(), r.trafficClass(), r.flowLabel());
        modify(QpState.RTR, "INIT -> RTR", s -> {
            AddressHandle.encode(s, true, av);
            return QpAttrs.toRtr(s, mtu.code(), r.remote().qpn(), r.remote().psn(), type == QpType.RC,
                    r.maxDestRdAtomic(), r.minRnrTimer());
        });
    }

    /**
     * INIT → RTR for a UD QP ({@code ibv_modify_qp} with {@code IBV_QP_STATE} only).
     *
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in INIT, is not UD, or closed
     */
    public synchronized void toRtr() throws VerbsException {
        if (type != QpType.UD) {
            throw new IllegalStateException("a connected queue pair needs the peer: use toRtr(RtrAttributes)");
        }
        expect(QpState.INIT, QpState.RTR);
        modify(QpState.RTR, "INIT -> RTR", s -> QpAttrs.stateOnly());
    }

    /**
     * RTR → RTS ({@code ibv_modify_qp}: state and SQ PSN, and for RC timeout, retry counts and max_rd_atomic).
     *
     * @param a the attributes
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in RTR, or closed
     */
    public synchronized void toRts(RtsAttributes a) throws VerbsException {
        expect(QpState.RTR, QpState.RTS);
        modify(QpState.RTS, "RTR -> RTS", s -> QpAttrs.toRts(s, a.sqPsn(), type == QpType.RC, a.timeout(),
                a.retryCount(), a.rnrRetry(), a.maxRdAtomic()));
    }

    /**
     * The whole way to RTS for a connected QP: {@link #toInit()} if still in RESET, then RTR towards
     * {@code remote} and RTS with {@code localPsn}, all with defaults.
     *
     * @param remote   the peer's endpoint
     * @param localPsn the PSN this side announced in its own endpoint
     * @throws VerbsException if a verb fails
     */
    public void connect(QpEndpoint remote, int localPsn) throws VerbsException {
        if (state == QpState.RESET) {
            toInit();
        }
        toRtr(RtrAttributes.builder(remote).build());
        toRts(RtsAttributes.builder(localPsn).build());
    }

    /**
     * Moves to ERROR from any state ({@code ibv_modify_qp}): outstanding and later requests complete
     * with {@link WcStatus#WR_FLUSH_ERR}.
     *
     * @throws VerbsException if the verb fails
     */
    public synchronized void toError() throws VerbsException {
        ensureOpen();
        modify(QpState.ERROR, "-> ERROR", s -> QpAttrs.stateOnly());
    }

    /**
     * Moves to RESET from any state ({@code ibv_modify_qp}). Outstanding requests are discarded without
     * completions: their regions are released, and completions of them still queued in a CQ are dropped.
     *
     * @throws VerbsException if the verb fails
     */
    public synchronized void reset() throws VerbsException {
        ensureOpen();
        withCqsLocked(() -> {
            modify(QpState.RESET, "-> RESET", s -> QpAttrs.stateOnly());
            forgetOutstanding();
            token = WorkRequestIds.register(t -> completions);
            return null;
        });
        var d = driver;
        if (d != null) {
            d.discarded(false); // outside the CQ locks: it completes futures, whose continuations run here
        }
    }

    /** Fills a transition's members of {@code struct ibv_qp_attr} and returns its mask ({@link QpAttrs}). */
    private interface AttrWriter {
        int write(MemorySegment attr);
    }

    private void expect(QpState from, QpState to) {
        ensureOpen();
        if (state != from) {
            throw new IllegalStateException(description() + " #" + qpNumber + " is in " + state + ": " + to
                    + " can only follow " + from + " (RESET -> INIT -> RTR -> RTS)");
        }
    }

    private void modify(QpState target, String what, AttrWriter writer) throws VerbsException {
        acquire(false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttrs.attr(a, target.code());
            int mask = writer.write(attr);
            ResourceVerbs.modifyQp(handle, attr, mask, "QP #" + qpNumber + " " + what);
            state = target;
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Queries the QP ({@code ibv_query_qp}), including the state the device has it in.
     *
     * @return the attributes
     * @throws VerbsException if the verb fails
     */
    public QpAttributes query() throws VerbsException {
        acquire(false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment[] q = QpAttrs.forQuery(a);
            ResourceVerbs.queryQp(handle, q[0], QUERY_ALL, q[1]);
            long[] v = QpAttrs.queried(q[0]); // in QpAttrs.queried's order
            QpCapabilities caps = new QpCapabilities((int) v[7], (int) v[8], (int) v[9], (int) v[10], (int) v[11]);
            return new QpAttributes(QpState.of((int) v[0]), Mtu.of((int) v[1]), (int) v[2], (int) v[3], (int) v[4],
                    (int) v[5], (int) v[6], caps, (int) v[12], (int) v[13], (int) v[14], (int) v[15], (int) v[16],
                    (int) v[17], (int) v[18], (int) v[19], v[20] != 0, Gid.of(QpAttrs.queriedDgid(q[0])),
                    (int) v[21], (int) v[22], (int) v[23]);
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * This side's endpoint for the peer: the port's LID, this QP's number, {@code psn}, and on RoCE the
     * GID {@link Context#bestRoceGid(int)} picks.
     *
     * @param psn the initial send PSN this side will use (24 bits)
     * @return the endpoint
     * @throws VerbsException if the port cannot be queried
     */
    public QpEndpoint localEndpoint(int psn) throws VerbsException {
        ensureOpen();
        PortAttributes p = context.queryPort(port);
        return new QpEndpoint(p.lid(), qpNumber, psn, p.isRoce() ? context.bestRoceGid(port).gid() : Gid.ZERO);
    }

    /**
     * This side's endpoint with the GID at {@code gidIndex} ({@code -g} of the C tools), or none when negative.
     *
     * @param psn      the initial send PSN (24 bits)
     * @param gidIndex the GID index, or -1 for no GID
     * @return the endpoint
     * @throws VerbsException if the port or GID cannot be queried
     */
    public QpEndpoint localEndpoint(int psn, int gidIndex) throws VerbsException {
        ensureOpen();
        PortAttributes p = context.queryPort(port);
        return new QpEndpoint(p.lid(), qpNumber, psn, gidIndex < 0 ? Gid.ZERO : context.queryGid(port, gidIndex).gid());
    }

    // ---------------------------------------------------------------- posting

    /**
     * Posts a chain of send requests ({@code ibv_post_send} through {@code context->ops.post_send}).
     *
     * @param batch the requests; unchanged, reusable after the call
     * @throws VerbsException with the errno and the failing request when not all were posted
     *         ({@code batch.failedIndex()} says which; the ones before it were posted)
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted and
     *         no queue room taken)
     */
    public void post(SendBatch batch) throws VerbsException {
        post(batch, false);
    }

    void post(SendBatch batch, boolean byDriver) throws VerbsException {
        post(batch, byDriver, -1);
    }

    /** A driver's post; with {@code idBase >= 0} see {@link RequestBatch#post(Slots, int, boolean,
     * MemorySegment, MemorySegment, MemorySegment, long)}. */
    void post(SendBatch batch, boolean byDriver, long idBase) throws VerbsException {
        int rc = tryPost(batch, byDriver, idBase);
        if (rc != 0) {
            throw VerbsException.of("ibv_post_send", rc, explainSend(batch, rc));
        }
    }

    /**
     * Like {@link #post(SendBatch)}, returning the verb's status instead of throwing: 0 when all were
     * posted, else an errno ({@code ENOMEM} 12 when the send queue is full, {@code EINVAL} 22 for a
     * request the QP cannot take or a QP not yet in RTS) with {@code batch.failedIndex()} set.
     *
     * @param batch the requests
     * @return 0 or an errno value
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted and
     *         no queue room taken), or an {@code AsyncQueuePair} drives the QP (it owns the QP's wr_ids: post through
     *         it)
     */
    public int tryPost(SendBatch batch) {
        return tryPost(batch, false);
    }

    int tryPost(SendBatch batch, boolean byDriver) {
        return tryPost(batch, byDriver, -1);
    }

    int tryPost(SendBatch batch, boolean byDriver, long idBase) {
        if (!byDriver) {
            refuseIfDriven();
        }
        int n = batch.count;
        if (n == 0) {
            return 0;
        }
        batch.ensureOpen(); // the checks below read its native requests
        ensureOpen(); // a plain read: once a close is announced, posters stop contending for the lock it needs
        sendLock.lock(); // destroy() takes it first: a post in progress keeps the QP alive
        try {
            if (destroyed) {
                throw closedError();
            }
            QpState s = state;
            if (s != QpState.RTS && s != QpState.SQD && s != QpState.SQE && s != QpState.ERROR) {
                batch.failedIndex = 0;
                return EINVAL;
            }
            for (int i = 0; i < n; i++) {
                if (batch.sgeCounts[i] > capabilities.maxSendSge()
                        || (batch.isInline(i) && batch.bytes[i] > capabilities.maxInlineData())
                        || batch.refusalFor(type, i) != null) {
                    batch.failedIndex = i;
                    return EINVAL;
                }
            }
            return batch.post(sendRing, token, false, postSendFn, handle, badSend, idBase);
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Posts a chain of receive requests ({@code ibv_post_recv} through {@code context->ops.post_recv}).
     *
     * @param batch the requests; reusable after the call
     * @throws VerbsException with the errno and the failing request when not all were posted
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted and
     *         no queue room taken)
     */
    public void post(ReceiveBatch batch) throws VerbsException {
        post(batch, false);
    }

    void post(ReceiveBatch batch, boolean byDriver) throws VerbsException {
        int rc = tryPost(batch, byDriver);
        if (rc != 0) {
            throw VerbsException.of("ibv_post_recv", rc, description() + " #" + qpNumber + ": request " + batch.failedIndex
                    + " of " + batch.count + (state == QpState.RESET ? " (the QP is still in RESET)"
                    : rc == ENOMEM ? " (receive queue full: " + capabilities.maxRecvWr() + " outstanding)"
                    : batch.sgeCounts[Math.max(0, batch.failedIndex)] > capabilities.maxRecvSge()
                    ? " has more scatter entries than the QP's " + capabilities.maxRecvSge() : ""));
        }
    }

    /**
     * Like {@link #post(ReceiveBatch)}, returning 0 or an errno ({@code ENOMEM} when the receive queue
     * is full, {@code EINVAL} in RESET or for too many SGEs) with {@code batch.failedIndex()} set.
     *
     * @param batch the requests
     * @return 0 or an errno value
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted and
     *         no queue room taken), or an {@code AsyncQueuePair} drives the QP (it owns the QP's wr_ids: post through
     *         it)
     */
    public int tryPost(ReceiveBatch batch) {
        return tryPost(batch, false);
    }

    int tryPost(ReceiveBatch batch, boolean byDriver) {
        if (!byDriver) {
            refuseIfDriven();
        }
        int n = batch.count;
        if (n == 0) {
            return 0;
        }
        if (srq != null) {
            throw new IllegalStateException(description() + " #" + qpNumber
                    + " takes its receives from a shared receive queue: post them to the SRQ");
        }
        ensureOpen();
        recvLock.lock(); // destroy() takes it first
        try {
            if (destroyed) {
                throw closedError();
            }
            if (state == QpState.RESET) {
                batch.failedIndex = 0;
                return EINVAL;
            }
            for (int i = 0; i < n; i++) {
                if (batch.sgeCounts[i] > capabilities.maxRecvSge()) {
                    batch.failedIndex = i;
                    return EINVAL;
                }
            }
            return batch.post(recvRing, token, true, postRecvFn, handle, badRecv);
        } finally {
            recvLock.unlock();
        }
    }

    /**
     * Posts one signaled send of a region range; a shortcut for a one-request {@link SendBatch}.
     *
     * @param wrId   returned in the completion
     * @param region the source region
     * @param offset offset in it
     * @param length bytes
     * @throws VerbsException if the verb refuses
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit the
     *                                  region (the message names the argument and the values)
     */
    public void postSend(long wrId, MemoryRegion region, long offset, int length) throws VerbsException {
        sendLock.lock();
        try {
            refuseIfDestroyed();
            post(oneSend.clear().send(wrId, region, offset, length));
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Posts one signaled inline send ({@code IBV_WR_SEND} with {@code IBV_SEND_INLINE}) of {@code data}, which
     * may be any memory, registered or not (a heap array through {@code MemorySegment.ofArray}): the bytes are
     * copied before this returns and the provider ignores the lkey of inline data. A shortcut for a one-request
     * {@link SendBatch#sendInline}; allocation-free.
     *
     * @param wrId returned in the completion
     * @param data the bytes, at most {@code capabilities().maxInlineData()} ({@code cap.max_inline_data})
     * @throws VerbsException           if the verb refuses
     * @throws IllegalArgumentException if {@code data} is longer than the QP's {@code cap.max_inline_data}
     */
    public void postSendInline(long wrId, MemorySegment data) throws VerbsException {
        if (data.byteSize() > capabilities.maxInlineData()) {
            throw new IllegalArgumentException(description() + " #" + qpNumber + ": " + data.byteSize()
                    + " bytes of inline data, the QP's cap.max_inline_data is " + capabilities.maxInlineData()
                    + " (QueuePairBuilder.maxInlineData)");
        }
        sendLock.lock();
        try {
            refuseIfDestroyed();
            post(oneSend.clear().sendInline(wrId, data));
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Posts one receive into a region range; a shortcut for a one-request {@link ReceiveBatch}.
     *
     * @param wrId   returned in the completion
     * @param region the destination region
     * @param offset offset in it
     * @param length bytes
     * @throws VerbsException if the verb refuses
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit the
     *                                  region (the message names the argument and the values)
     */
    public void postReceive(long wrId, MemoryRegion region, long offset, int length) throws VerbsException {
        recvLock.lock();
        try {
            refuseIfDestroyed();
            post(oneRecv.clear().receive(wrId, region, offset, length));
        } finally {
            recvLock.unlock();
        }
    }

    private String explainSend(SendBatch b, int rc) {
        int i = Math.max(0, b.failedIndex);
        String why;
        if (rc == ENOMEM) {
            why = "send queue full (" + capabilities.maxSendWr() + " outstanding; signal some requests and poll)";
        } else if (state != QpState.RTS && state != QpState.SQD && state != QpState.SQE && state != QpState.ERROR) {
            why = "the QP is in " + state + ", sends need RTS";
        } else if (b.refusalFor(type, i) != null) {
            why = b.refusalFor(type, i);
        } else if (b.sgeCounts[i] > capabilities.maxSendSge()) {
            why = "it has " + b.sgeCounts[i] + " scatter/gather entries, the QP allows " + capabilities.maxSendSge();
        } else if (b.isInline(i) && b.bytes[i] > capabilities.maxInlineData()) {
            why = "it has " + b.bytes[i] + " inline bytes, the QP allows " + capabilities.maxInlineData();
        } else {
            why = "refused by the provider";
        }
        return description() + " #" + qpNumber + ": request " + i + " of " + b.count + ": " + why;
    }

    // ---------------------------------------------------------------- completions and teardown

    /** Takes this QP's completions from {@link CompletionQueue#poll}; kept off the public API. */
    private final class Completions implements WorkRequestIds.Owner {
        @Override
        public long complete(boolean recv, long seq, WorkCompletions wcs, int i) {
            return recv ? recvRing.complete(seq, wcs, i) : sendRing.complete(seq, null, 0);
        }

        @Override
        public int token() {
            return token;
        }

        @Override
        public dev.rdma4j.internal.QpDriver driver() {
            return driver;
        }
    }

    /** Outstanding requests will never complete: release their pins. Callers hold the CQ poll locks. */
    private void forgetOutstanding() {
        WorkRequestIds.unregister(token);
        sendLock.lock();
        recvLock.lock();
        try {
            sendRing.releaseAll();
            recvRing.releaseAll();
        } finally {
            recvLock.unlock();
            sendLock.unlock();
        }
    }

    private interface Locked<T> {
        T run() throws VerbsException;
    }

    private <T> T withCqsLocked(Locked<T> body) throws VerbsException {
        ReentrantLock a = sendCq.pollLock();
        ReentrantLock b = recvCq.pollLock();
        if (System.identityHashCode(a) > System.identityHashCode(b)) {
            ReentrantLock x = a;
            a = b;
            b = x;
        }
        a.lock();
        b.lock();
        try {
            return body.run();
        } finally {
            b.unlock();
            a.unlock();
        }
    }

    /** Under {@link #sendLock} or {@link #recvLock}. */
    private void refuseIfDestroyed() {
        if (destroyed) {
            throw closedError();
        }
    }

    @Override
    void destroy() {
        for (ReentrantLock l : new ReentrantLock[] {sendLock, recvLock}) { // one at a time: no lock order to keep
            l.lock(); // a post in progress ends first; later ones see the flag (written under each lock)
            try {
                destroyed = true;
            } finally {
                l.unlock();
            }
        }
        try {
            context.unregister(handle.address());
            withCqsLocked(() -> {
                try {
                    verbs.destroy(handle);
                } catch (java.io.IOException e) {
                    throw QueuePairBuilder.verbsFailure(e);
                }
                forgetOutstanding();
                return null;
            });
        } catch (VerbsException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } finally {
            oneSend.close();
            oneRecv.close();
            arena.close();
            sendCq.removeDependent(this);
            recvCq.removeDependent(this);
            if (srq != null) {
                srq.removeDependent(this);
            }
            var d = driver;
            if (d != null) {
                d.discarded(true);
            }
        }
    }

    /**
     * Receives posted to this QP's own receive queue and not yet completed (rdma4j's count).
     *
     * @return outstanding receives
     */
    public int outstandingReceives() {
        return recvRing.outstanding();
    }

    /**
     * The shared receive queue the QP takes its receives from.
     *
     * @return the SRQ, or null for a QP with its own receive queue
     */
    public SharedReceiveQueue sharedReceiveQueue() {
        return srq;
    }

    @Override
    public String toString() {
        return description() + " #" + qpNumber + " " + state + (isClosed() ? " (closed)" : "");
    }

    @Override
    String label() {
        return description() + " #" + qpNumber;
    }
}
