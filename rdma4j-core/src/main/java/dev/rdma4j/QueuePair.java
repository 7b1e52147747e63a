package dev.rdma4j;

import dev.rdma4j.internal.ffi.CConstants;
import dev.rdma4j.internal.ffi.QpAttrs;
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

    private final Context context;
    private final ProtectionDomain pd;
    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    final MemorySegment handle;
    private final int qpNumber;
    private final QpCapabilities capabilities;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badSend = arena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment badRecv = arena.allocate(ValueLayout.ADDRESS);
    final WorkRing sendRing;
    final WorkRing recvRing;
    final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock recvLock = new ReentrantLock();
    /**
     * Set under {@link #sendLock} and again under {@link #recvLock} before the QP is destroyed; the posts check it
     * under their lock instead of acquiring the life-cycle counter (no atomic read-modify-write per post).
     */
    boolean destroyed;
    private final SendBatch oneSend;
    private final ReceiveBatch oneRecv;
    volatile QpState state = QpState.RESET;
    volatile int port = 1;
    volatile int token;
    private final boolean signalAll;
    final QpCompletions completions = new QpCompletions(this);
    private final EventListeners listeners = new EventListeners();

    private final dev.rdma4j.internal.QpVerbs verbs;
    private final SharedReceiveQueue srq;

    QueuePair(QueuePairBuilder b, dev.rdma4j.internal.QpVerbs verbs) throws VerbsException {
        super("QueuePair(" + b.type + ")", b.pd);
        this.context = b.pd.context();
        this.pd = b.pd;
        this.type = b.type;
        this.sendCq = b.sendCq;
        this.recvCq = b.recvCq != null ? b.recvCq : b.sendCq;
        QueuePairBuilder.Made m;
        try {
            m = QueuePairBuilder.create(this, b, verbs, sendCq, recvCq, t -> completions);
        } catch (VerbsException | RuntimeException | Error e) {
            arena.close();
            abandon();
            throw e;
        }
        this.verbs = verbs;
        this.srq = b.srq;
        this.signalAll = b.signalAll;
        this.handle = m.qp();
        this.capabilities = m.caps();
        this.qpNumber = m.qpn();
        this.postSendFn = m.sendFn();
        this.postRecvFn = m.recvFn();
        this.sendRing = m.sendRing();
        this.recvRing = m.recvRing();
        this.oneSend = m.oneSend();
        this.oneRecv = m.oneRecv();
        this.token = m.token();
        context.register(handle.address(), this); // a map entry: cannot fail
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
        return listeners.next();
    }

    void dispatch(AsyncEvent e) {
        listeners.dispatch(context, e);
    }

    /** rdma_cm moved the QP (connect, accept, disconnect). */
    void stateChanged(QpState s) {
        state = s;
    }

    /** See {@code Access.drive}. */
    synchronized void drive(dev.rdma4j.internal.QpDriver d) {
        ensureOpen();
        completions.drive(d);
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
        QpTransitions.toInit(this, a);
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
        QpTransitions.toRtr(this, r);
    }

    /**
     * INIT → RTR for a UD QP ({@code ibv_modify_qp} with {@code IBV_QP_STATE} only).
     *
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in INIT, is not UD, or closed
     */
    public synchronized void toRtr() throws VerbsException {
        QpTransitions.toRtr(this);
    }

    /**
     * RTR → RTS ({@code ibv_modify_qp}: state and SQ PSN, and for RC timeout, retry counts and max_rd_atomic).
     *
     * @param a the attributes
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if the QP is not in RTR, or closed
     */
    public synchronized void toRts(RtsAttributes a) throws VerbsException {
        QpTransitions.toRts(this, a);
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
        QpTransitions.modify(this, QpState.ERROR, "-> ERROR", s -> QpAttrs.stateOnly());
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
            QpTransitions.modify(this, QpState.RESET, "-> RESET", s -> QpAttrs.stateOnly());
            forgetOutstanding();
            token = WorkRequestIds.register(t -> completions);
            return null;
        });
        var d = completions.driver();
        if (d != null) {
            d.discarded(false); // outside the CQ locks: it completes futures, whose continuations run here
        }
    }

    /**
     * Queries the QP ({@code ibv_query_qp}), including the state the device has it in.
     *
     * @return the attributes
     * @throws VerbsException if the verb fails
     */
    public QpAttributes query() throws VerbsException {
        return QpTransitions.query(this);
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
     *         ({@code batch.failedIndex()} says which, and whether the ones before it were posted)
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted and
     *         no queue room taken)
     */
    public void post(SendBatch batch) throws VerbsException {
        post(batch, false, -1);
    }

    /** A driver's post; with {@code idBase >= 0} see {@link RequestBatch#post(Slots, int, boolean,
     * MemorySegment, MemorySegment, MemorySegment, long)}. */
    void post(SendBatch batch, boolean byDriver, long idBase) throws VerbsException {
        int rc = tryPost(batch, byDriver, idBase);
        if (rc != 0) {
            throw VerbsException.of("ibv_post_send", rc,
                    label() + ": " + batch.explainRefusal(rc, capabilities, state, type));
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
        return tryPost(batch, false, -1);
    }

    int tryPost(SendBatch batch, boolean byDriver, long idBase) {
        if (!byDriver) {
            completions.refuseIfDriven();
        }
        int n = batch.count;
        if (n == 0) {
            return 0;
        }
        batch.beginPost(); // the checks below read its native requests
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
            if (batch.windowOps != 0 && batch.extras.checkWindowOps(this, n) != 0) {
                return EINVAL; // an invalidate of a window not bound here: nothing posted
            }
            sendCq.sendPosted(); // the engine's drain polls again after a dispatch that posted (CompletionQueue)
            int rc = batch.post(sendRing, token, false, postSendFn, handle, badSend, idBase);
            return batch.windowOps == 0 ? rc : batch.extras.windowOpsPosted(rc, n, this); // in posting order
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
            throw VerbsException.of("ibv_post_recv", rc, label() + ": " + batch.explainRefusal(rc, capabilities, state));
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
            completions.refuseIfDriven();
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

    // ---------------------------------------------------------------- completions and teardown

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
            var d = completions.driver();
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
