package dev.rdma4j;

import dev.rdma4j.internal.ffi.CConstants;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.QpAttrs;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Builds a {@link QueuePair} ({@code ibv_create_qp}); every value has a default: 16 send and 16 receive requests,
 * 1 SGE each, no inline data, only requests that ask for it signaled. Made by {@link QueuePair#builder}.
 *
 * <p>Threading: not thread-safe; configure and build on one thread. {@link #build()} may be called more than once
 * (each call creates a queue pair).
 */
public final class QueuePairBuilder {
    private static final dev.rdma4j.internal.QpVerbs PLAIN = new dev.rdma4j.internal.QpVerbs() {
        @Override
        public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws NativeException {
            return ResourceVerbs.createQp(pd, initAttr);
        }

        @Override
        public void destroy(MemorySegment qp) throws NativeException {
            ResourceVerbs.destroyQp(qp);
        }
    };

    /**
     * {@code ibv_create_qp_ex} with the {@code ibv_wr_*} operations of the QP's type ({@code send_ops_flags}), for
     * {@link QueuePairEx}; destroyed as any QP.
     */
    private static final dev.rdma4j.internal.QpVerbs EXTENDED = new dev.rdma4j.internal.QpVerbs() {
        @Override
        public MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws NativeException {
            return dev.rdma4j.internal.ffi.QpExVerbs.createQpEx(pd, initAttr);
        }

        @Override
        public void destroy(MemorySegment qp) throws NativeException {
            ResourceVerbs.destroyQp(qp);
        }
    };

    /** What {@link dev.rdma4j.internal.QpVerbs} threw, as the API's exception. */
    static VerbsException verbsFailure(java.io.IOException e) {
        if (e instanceof VerbsException v) {
            return v;
        }
        if (e instanceof NativeException n) {
            return VerbsException.from(n);
        }
        throw new IllegalStateException(e.getMessage(), e);
    }

    /** The most work requests per queue rdma4j believes a device grants (its rings are this long at most). */
    static final long MAX_GRANTED_WR = 1 << 22;
    /** The most bytes of inline data rdma4j believes a device grants. */
    static final long MAX_GRANTED_INLINE = 1 << 20;

    /**
     * The capabilities {@code ibv_create_qp} wrote back, each a C {@code uint32_t}: a value no device grants (above
     * {@link #MAX_GRANTED_WR} requests, {@link RequestBatch#MAX_SGE} scatter/gather entries or
     * {@link #MAX_GRANTED_INLINE} bytes, or negative as a Java int) is refused, since the rings and the post checks
     * are sized from them. Receive capacities of a QP on an SRQ are 0: it has no receive queue.
     */
    static QpCapabilities granted(MemorySegment init, boolean onSrq) throws VerbsException {
        int sendWr = cap(init, QpAttrs.Cap.MAX_SEND_WR, MAX_GRANTED_WR);
        int recvWr = onSrq ? 0 : cap(init, QpAttrs.Cap.MAX_RECV_WR, MAX_GRANTED_WR);
        int sendSge = cap(init, QpAttrs.Cap.MAX_SEND_SGE, RequestBatch.MAX_SGE);
        int recvSge = onSrq ? 0 : cap(init, QpAttrs.Cap.MAX_RECV_SGE, RequestBatch.MAX_SGE);
        int inline = cap(init, QpAttrs.Cap.MAX_INLINE_DATA, MAX_GRANTED_INLINE);
        return new QpCapabilities(sendWr, recvWr, sendSge, recvSge, inline);
    }

    private static int cap(MemorySegment init, QpAttrs.Cap cap, long bound) throws VerbsException {
        long v = QpAttrs.grantedCap(init, cap); // unsigned
        if (v > bound) {
            throw VerbsException.of("ibv_create_qp", CConstants.EOVERFLOW, "the provider granted " + cap.cName()
                    + " = " + v + ", beyond any device's (at most " + bound + "): the queue pair was destroyed");
        }
        return (int) v;
    }

    /** What {@link #create} made: the native QP and the Java side sized from what the device granted. */
    record Made(MemorySegment qp, QpCapabilities caps, int qpn, MemorySegment sendFn, MemorySegment recvFn,
            WorkRing sendRing, WorkRing recvRing, SendBatch oneSend, ReceiveBatch oneRecv, int token) {
    }

    /**
     * Creates the native QP for {@code qpObject} (under construction): makes it a dependent of its CQs and SRQ,
     * calls {@code verbs.create}, checks the granted capacities, sizes the rings and batches from them and registers
     * the QP's wr_id owner. On any failure everything made so far is undone (the native QP destroyed) and the
     * failure thrown.
     */
    static Made create(QueuePair qpObject, QueuePairBuilder b, dev.rdma4j.internal.QpVerbs verbs,
            CompletionQueue sendCq, CompletionQueue recvCq, java.util.function.IntFunction<WorkRequestIds.Owner> owner)
            throws VerbsException {
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
        sendCq.addDependent(qpObject);
        try {
            recvCq.addDependent(qpObject);
            if (b.srq != null) {
                try {
                    b.srq.addDependent(qpObject); // an SRQ cannot be destroyed while QPs are attached
                } catch (RuntimeException e) {
                    recvCq.removeDependent(qpObject);
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            sendCq.removeDependent(qpObject);
            throw e;
        }
        try (Arena a = Arena.ofConfined()) {
            // with an SRQ the QP has no receive queue, and the verbs ignore the receive capacities; rxe then
            // neither checks nor sets them but hands back what it was given, so ask for none
            MemorySegment init = QpAttrs.init(a, sendCq.handle(), recvCq.handle(),
                    b.srq != null ? b.srq.handle() : null, b.maxSendWr, b.srq != null ? 0 : b.maxRecvWr,
                    b.maxSendSge, b.srq != null ? 0 : b.maxRecvSge, b.maxInlineData, b.type.code(), b.signalAll);
            try {
                qp = verbs.create(b.pd.handle(), init);
            } catch (java.io.IOException e) {
                throw verbsFailure(e);
            }
            // ibv_create_qp writes back what the device actually granted (u32s: checked before any is an int)
            caps = granted(init, b.srq != null);
            // everything made after the native QP is inside this cleanup path
            qpn = QpAttrs.qpNum(qp);
            sendFn = DataPath.op(b.pd.context().handle(), DataPath.Op.POST_SEND);
            recvFn = DataPath.op(b.pd.context().handle(), DataPath.Op.POST_RECV);
            // sized from the checked capabilities: none is negative, none above its bound (no overflow either)
            sr = new WorkRing(caps.maxSendWr(), caps.maxSendSge() + 1);
            rr = new WorkRing(caps.maxRecvWr(), Math.max(1, caps.maxRecvSge()));
            os = new SendBatch(1, Math.max(1, caps.maxSendSge()), Math.min(caps.maxInlineData(), 1 << 20));
            or = new ReceiveBatch(1, Math.max(1, caps.maxRecvSge()));
            if (b.afterCreate != null) {
                b.afterCreate.run(); // tests: a failure of the Java side once the native QP exists
            }
            tok = WorkRequestIds.register(owner); // refused when the registry is full
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
            sendCq.removeDependent(qpObject);
            recvCq.removeDependent(qpObject);
            if (b.srq != null) {
                b.srq.removeDependent(qpObject);
            }
            throw e;
        }
        return new Made(qp, caps, qpn, sendFn, recvFn, sr, rr, os, or, tok);
    }

    final ProtectionDomain pd;
    final QpType type;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    int maxSendWr = 16;
    int maxRecvWr = 16;
    int maxSendSge = 1;
    int maxRecvSge = 1;
    int maxInlineData;
    boolean signalAll;
    boolean extended;
    SharedReceiveQueue srq;
    /** Tests only: runs once the native QP and the Java side exist, before the build returns. */
    Runnable afterCreate;

    QueuePairBuilder(ProtectionDomain pd, QpType type) {
        this.pd = pd;
        this.type = type;
    }

    /**
     * One CQ for both queues.
     *
     * @param cq the completion queue
     * @return this
     */
    public QueuePairBuilder completionQueue(CompletionQueue cq) {
        this.sendCq = cq;
        this.recvCq = cq;
        return this;
    }

    /**
     * The CQ of the send queue.
     *
     * @param cq the completion queue
     * @return this
     */
    public QueuePairBuilder sendCompletionQueue(CompletionQueue cq) {
        this.sendCq = cq;
        return this;
    }

    /**
     * The CQ of the receive queue (default: the send CQ).
     *
     * @param cq the completion queue
     * @return this
     */
    public QueuePairBuilder receiveCompletionQueue(CompletionQueue cq) {
        this.recvCq = cq;
        return this;
    }

    /**
     * Queue depths ({@code cap.max_send_wr}, {@code cap.max_recv_wr}).
     *
     * @param sendRequests outstanding sends
     * @param receiveRequests outstanding receives
     * @return this
     */
    public QueuePairBuilder capacity(int sendRequests, int receiveRequests) {
        this.maxSendWr = sendRequests;
        this.maxRecvWr = receiveRequests;
        return this;
    }

    /**
     * Scatter/gather entries per request ({@code cap.max_send_sge}, {@code cap.max_recv_sge}).
     *
     * @param send per send request
     * @param receive per receive request
     * @return this
     */
    public QueuePairBuilder maxSge(int send, int receive) {
        this.maxSendSge = send;
        this.maxRecvSge = receive;
        return this;
    }

    /**
     * Inline data size ({@code cap.max_inline_data}).
     *
     * @param bytes the most bytes a send can carry inline
     * @return this
     */
    public QueuePairBuilder maxInlineData(int bytes) {
        this.maxInlineData = bytes;
        return this;
    }

    /**
     * Takes receives from a shared receive queue ({@code init_attr.srq}) instead of an own receive queue;
     * posting receives to the QP is then refused.
     *
     * @param srq the SRQ (its PD may differ from the QP's)
     * @return this
     */
    public QueuePairBuilder sharedReceiveQueue(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    /**
     * Whether every send generates a completion ({@code sq_sig_all}).
     *
     * @param signalAll the flag
     * @return this
     */
    public QueuePairBuilder signalAll(boolean signalAll) {
        this.signalAll = signalAll;
        return this;
    }

    /**
     * Creates the queue pair with {@code ibv_create_qp_ex} for the extended posting API ({@link QueuePairEx}, the
     * {@code ibv_wr_*} functions), with every operation of its type that rdma4j encodes ({@code send_ops_flags}): RC
     * sends (with immediate, with invalidate), RDMA write (with immediate) and read, atomics (compare-and-swap,
     * fetch-and-add, atomic write), local invalidate and memory window binds; UC sends, writes, binds; UD sends. The
     * QP also posts through {@link QueuePair#post} as usual.
     *
     * @return this
     */
    public QueuePairBuilder extendedPosting() {
        this.extended = true;
        return this;
    }

    /**
     * Creates the queue pair in RESET ({@code ibv_create_qp}).
     *
     * @return the queue pair
     * @throws VerbsException if the verb fails (e.g. capacities above the device's limits)
     * @throws IllegalArgumentException if no completion queue was given or a capacity is negative
     */
    public QueuePair build() throws VerbsException {
        if (sendCq == null) {
            throw new IllegalArgumentException("a queue pair needs a completion queue");
        }
        if (maxSendWr < 0 || maxRecvWr < 0 || maxSendSge < 0 || maxRecvSge < 0 || maxInlineData < 0) {
            throw new IllegalArgumentException("capacities must not be negative");
        }
        return build(extended ? EXTENDED : PLAIN);
    }

    QueuePair build(dev.rdma4j.internal.QpVerbs verbs) throws VerbsException {
        if (sendCq == null) {
            throw new IllegalArgumentException("a queue pair needs a completion queue");
        }
        return new QueuePair(this, verbs);
    }

    /**
     * The protection domain the queue pair will be created in.
     *
     * @return the domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The transport of the queue pair to be created ({@code qp_type} of {@code struct ibv_qp_init_attr}).
     *
     * @return the type
     */
    public QpType type() {
        return type;
    }
}
