package dev.rdma4j;

import dev.rdma4j.internal.ffi.CConstants;
import dev.rdma4j.internal.ffi.QpExVerbs;
import dev.rdma4j.internal.ffi.QpExVerbs.Fn;
import dev.rdma4j.internal.ffi.WrView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumMap;
import java.util.Map;

/**
 * The extended posting API of a queue pair ({@code struct ibv_qp_ex}, {@code ibv_qp_to_qp_ex}): the requests of a
 * {@link SendBatch} posted through the {@code ibv_wr_*} functions instead of {@code ibv_post_send}:
 * {@code ibv_wr_start}, then per request {@code qpx->wr_id}/{@code wr_flags} and its opcode's function
 * ({@code ibv_wr_send}, {@code _send_imm}, {@code _send_inv}, {@code _rdma_write}, {@code _rdma_write_imm},
 * {@code _rdma_read}, {@code _atomic_cmp_swp}, {@code _atomic_fetch_add}, {@code _atomic_write},
 * {@code _local_inv}, {@code _bind_mw}), {@code ibv_wr_set_ud_addr} for UD, {@code ibv_wr_set_sge} /
 * {@code _set_sge_list} or {@code ibv_wr_set_inline_data} / {@code _set_inline_data_list}, and {@code ibv_wr_complete}
 * (all of the batch, or none of it: {@code ibv_wr_abort} semantics on a failure). The batch is checked as
 * {@link QueuePair#post} checks it, rdma4j owns the wr_ids, the requests pin their regions until they complete, and
 * nothing is allocated per post: the same safety, a different C path (the one {@code rdma4j perf --wr-api} measures).
 * {@link SendBatch#atomicWrite} is posted only here.
 *
 * <p><b>On rxe before rdma-core 64</b> (Debian 12 ships 44), {@code ibv_wr_set_sge_list} takes a request's length as
 * the number of entries times the first entry's length (rdma-core commit 406cd2ad0): a request of several entries
 * sends the wrong number of bytes, or fails with {@code LOC_PROT_ERR} when the first entry is the longest. Post
 * requests of several scatter/gather entries through {@link QueuePair#post} there (a device test pins this down).
 *
 * <p>The queue pair must have been built with {@link QueuePairBuilder#extendedPosting()}; posts through
 * {@link QueuePair#post} and through this object may be mixed (they share the send queue and its lock).
 *
 * <p>Threading: thread-safe; posts are serialised with the queue pair's other sends.
 */
public final class QueuePairEx {
    private final QueuePair qp;
    private final MemorySegment qpx;
    private final long address;
    private final Map<Fn, MemorySegment> fns = new EnumMap<>(Fn.class);
    private final MemorySegment start;
    private final MemorySegment complete;
    /** {@code struct ibv_data_buf} entries for inline data of several pieces (under the send lock). */
    private final MemorySegment dataBufs;
    private final java.util.function.IntUnaryOperator replay = this::replay;
    /** The batch being posted (under the send lock). */
    private SendBatch current;

    private QueuePairEx(QueuePair qp, MemorySegment qpx) {
        this.qp = qp;
        this.qpx = qpx;
        this.address = qpx.address();
        for (Fn f : Fn.values()) {
            MemorySegment p = QpExVerbs.fn(qpx, f);
            if (!p.equals(MemorySegment.NULL)) {
                fns.put(f, p);
            }
        }
        this.start = fns.get(Fn.START);
        this.complete = fns.get(Fn.COMPLETE);
        this.dataBufs = Arena.ofAuto().allocate(16L * Math.max(1, qp.capabilities().maxSendSge()), 8);
    }

    /**
     * The extended posting API of {@code qp} ({@code ibv_qp_to_qp_ex}). Cheap; one per queue pair is enough.
     *
     * @param qp a queue pair built with {@link QueuePairBuilder#extendedPosting()}
     * @return its extended API
     * @throws IllegalStateException if the queue pair is closed or was built without extended posting
     */
    public static QueuePairEx of(QueuePair qp) {
        qp.acquire(false);
        try {
            MemorySegment qpx = QpExVerbs.qpToQpEx(qp.handle);
            if (qpx == null || QpExVerbs.fn(qpx, Fn.START).equals(MemorySegment.NULL)) {
                throw new IllegalStateException(qp.label() + " was built without QueuePairBuilder.extendedPosting():"
                        + " it has no ibv_wr_* functions");
            }
            return new QueuePairEx(qp, qpx);
        } finally {
            qp.release(false);
        }
    }

    /**
     * The queue pair.
     *
     * @return the queue pair this API posts on
     */
    public QueuePair queuePair() {
        return qp;
    }

    /**
     * Posts the batch's requests through the {@code ibv_wr_*} functions ({@code ibv_wr_start} ... {@code
     * ibv_wr_complete}): all of them, or none.
     *
     * @param batch the requests; unchanged, reusable after the call
     * @throws VerbsException with the errno when nothing was posted ({@code batch.failedIndex()} names the request
     *                        rdma4j refused, or 0 when {@code ibv_wr_complete} refused the whole batch)
     * @throws IllegalStateException if the QP, the batch or a region the batch uses is closed (nothing is posted), or
     *                               an {@code AsyncQueuePair} drives the QP
     */
    public void post(SendBatch batch) throws VerbsException {
        int rc = tryPost(batch);
        if (rc != 0) {
            throw VerbsException.of("ibv_wr_complete", rc, qp.label() + ": " + explain(batch, rc));
        }
    }

    /**
     * Like {@link #post}, returning the status instead of throwing: 0 when all were posted, else an errno
     * ({@code ENOMEM} when the send queue is full, {@code EINVAL} for a request the QP cannot take or a QP not in
     * RTS, {@code EOPNOTSUPP} for an operation the QP was not created for) with {@code batch.failedIndex()} set.
     *
     * @param batch the requests
     * @return 0 or an errno value
     * @throws IllegalStateException as {@link #post}
     */
    public int tryPost(SendBatch batch) {
        qp.completions.refuseIfDriven();
        int n = batch.count;
        if (n == 0) {
            return 0;
        }
        batch.beginPost();
        qp.ensureOpen();
        qp.sendLock.lock(); // the QP's destroy takes it first
        try {
            if (qp.destroyed) {
                throw qp.closedError();
            }
            QpState s = qp.state;
            if (s != QpState.RTS && s != QpState.SQD && s != QpState.SQE && s != QpState.ERROR) {
                batch.failedIndex = 0;
                return CConstants.EINVAL;
            }
            QpCapabilities caps = qp.capabilities();
            for (int i = 0; i < n; i++) {
                int op = WrView.sendOpcode(batch.wrs, i);
                String refusal = batch.refusalFor(qp.type(), i, op);
                if (batch.sgeCounts[i] > caps.maxSendSge()
                        || (batch.isInline(i) && batch.bytes[i] > caps.maxInlineData())
                        || (refusal != null && refusal != SendRefusals.ATOMIC_WRITE_NEEDS_WR_API)) {
                    batch.failedIndex = i;
                    return CConstants.EINVAL;
                }
                if (!fns.containsKey(opcodeFn(op))) {
                    batch.failedIndex = i;
                    return dev.rdma4j.internal.ffi.Errno.EOPNOTSUPP;
                }
            }
            if (batch.windowOps != 0 && batch.extras.checkWindowOps(qp, n) != 0) {
                return CConstants.EINVAL; // an invalidate of a window not bound on the QP: nothing posted
            }
            current = batch;
            int rc;
            try {
                qp.sendCompletionQueue().sendPosted(); // as QueuePair.tryPost
                rc = batch.post(qp.sendRing, qp.token, replay);
            } finally {
                current = null; // no batch kept past its post
            }
            return batch.windowOps == 0 ? rc : batch.extras.windowOpsPosted(rc, n, qp);
        } finally {
            qp.sendLock.unlock();
        }
    }

    /** Under the send lock, the slots claimed: the {@code ibv_wr_*} calls of {@link #current}'s first {@code n}. */
    private int replay(int n) {
        SendBatch b = current;
        MemorySegment w = b.wrs;
        QpExVerbs.call(start, address);
        for (int i = 0; i < n; i++) {
            QpExVerbs.idAndFlags(qpx, WrView.sendWrIdOf(w, i), WrView.sendFlags(w, i));
            int op = WrView.sendOpcode(w, i);
            MemorySegment f = fns.get(opcodeFn(op));
            switch (op) {
                case WrView.WR_SEND -> QpExVerbs.call(f, address);
                case WrView.WR_SEND_WITH_IMM, WrView.WR_SEND_WITH_INV, WrView.WR_LOCAL_INV ->
                        QpExVerbs.callInt(f, address, WrView.immRaw(w, i));
                case WrView.WR_RDMA_WRITE, WrView.WR_RDMA_READ ->
                        QpExVerbs.rdma(f, address, WrView.rdmaRkey(w, i), WrView.rdmaAddr(w, i));
                case WrView.WR_RDMA_WRITE_WITH_IMM ->
                        QpExVerbs.rdmaImm(f, address, WrView.rdmaRkey(w, i), WrView.rdmaAddr(w, i), WrView.immRaw(w, i));
                case WrView.WR_ATOMIC_CMP_AND_SWP -> QpExVerbs.compareSwap(f, address, WrView.atomicRkey(w, i),
                        WrView.atomicAddr(w, i), WrView.atomicCompareAdd(w, i), WrView.atomicSwap(w, i));
                case WrView.WR_ATOMIC_FETCH_AND_ADD -> QpExVerbs.rdmaLong(f, address, WrView.atomicRkey(w, i),
                        WrView.atomicAddr(w, i), WrView.atomicCompareAdd(w, i));
                case WrView.WR_ATOMIC_WRITE -> QpExVerbs.rdmaLong(f, address, WrView.rdmaRkey(w, i),
                        WrView.rdmaAddr(w, i), b.extras.atomicValueAddress(i));
                case WrView.WR_BIND_MW -> QpExVerbs.bindMw(f, address, WrView.bindMwOf(w, i), WrView.bindRkey(w, i),
                        WrView.bindInfoAddress(w, i));
                default -> throw new IllegalStateException("opcode " + op + " has no ibv_wr_* function");
            }
            if (b.addressed[i]) {
                QpExVerbs.udAddr(fns.get(Fn.SET_UD_ADDR), address, WrView.udAh(w, i), WrView.udQpn(w, i),
                        WrView.udQkey(w, i));
            }
            setData(b, i, op);
        }
        return QpExVerbs.complete(complete, address);
    }

    /** Request {@code i}'s scatter/gather entries, or its inline data, through the setter that fits. */
    private void setData(SendBatch b, int i, int op) {
        int k = WrView.sendNumSge(b.wrs, i);
        if (k == 0 || op == WrView.WR_LOCAL_INV || op == WrView.WR_BIND_MW || op == WrView.WR_ATOMIC_WRITE) {
            return;
        }
        int first = i * b.maxSge;
        if (b.isInline(i)) {
            if (k == 1) {
                QpExVerbs.twoLongs(fns.get(Fn.SET_INLINE_DATA), address, WrView.sgeAddr(b.sges, first),
                        Integer.toUnsignedLong(WrView.sgeLength(b.sges, first)));
                return;
            }
            for (int s = 0; s < k; s++) { // struct ibv_data_buf: void *addr, size_t length
                dataBufs.set(ValueLayout.JAVA_LONG, 16L * s, WrView.sgeAddr(b.sges, first + s));
                dataBufs.set(ValueLayout.JAVA_LONG, 16L * s + 8, Integer.toUnsignedLong(WrView.sgeLength(b.sges, first + s)));
            }
            QpExVerbs.twoLongs(fns.get(Fn.SET_INLINE_DATA_LIST), address, k, dataBufs.address());
        } else if (k == 1) {
            QpExVerbs.sge(fns.get(Fn.SET_SGE), address, WrView.sgeLkey(b.sges, first), WrView.sgeAddr(b.sges, first),
                    WrView.sgeLength(b.sges, first));
        } else {
            QpExVerbs.twoLongs(fns.get(Fn.SET_SGE_LIST), address, k, b.sgList(i));
        }
    }

    /** The {@code ibv_wr_*} function an opcode of {@code enum ibv_wr_opcode} is posted with. */
    private static Fn opcodeFn(int op) {
        return switch (op) {
            case WrView.WR_SEND -> Fn.SEND;
            case WrView.WR_SEND_WITH_IMM -> Fn.SEND_IMM;
            case WrView.WR_SEND_WITH_INV -> Fn.SEND_INV;
            case WrView.WR_LOCAL_INV -> Fn.LOCAL_INV;
            case WrView.WR_RDMA_WRITE -> Fn.RDMA_WRITE;
            case WrView.WR_RDMA_WRITE_WITH_IMM -> Fn.RDMA_WRITE_IMM;
            case WrView.WR_RDMA_READ -> Fn.RDMA_READ;
            case WrView.WR_ATOMIC_CMP_AND_SWP -> Fn.ATOMIC_CMP_SWP;
            case WrView.WR_ATOMIC_FETCH_AND_ADD -> Fn.ATOMIC_FETCH_ADD;
            case WrView.WR_ATOMIC_WRITE -> Fn.ATOMIC_WRITE;
            case WrView.WR_BIND_MW -> Fn.BIND_MW;
            default -> Fn.ABORT; // never refused by the lookup: replay names the opcode
        };
    }

    private String explain(SendBatch batch, int rc) {
        int i = batch.failedIndex();
        if (rc == dev.rdma4j.internal.ffi.Errno.EOPNOTSUPP) {
            return "request " + i + ": the queue pair was not created for its operation (" + opcodeFn(
                    WrView.sendOpcode(batch.wrs, i)) + ")";
        }
        return batch.explainRefusal(rc, qp.capabilities(), qp.state, qp.type());
    }

    @Override
    public String toString() {
        return "QueuePairEx(" + qp.label() + ")";
    }
}
