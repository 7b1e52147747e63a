package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_ACCESS_FLAGS;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_AV;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_DEST_QPN;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_MAX_DEST_RD_ATOMIC;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_MAX_QP_RD_ATOMIC;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_MIN_RNR_TIMER;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_PATH_MTU;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_PKEY_INDEX;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_PORT;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_QKEY;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_RETRY_CNT;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_RNR_RETRY;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_RQ_PSN;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_SQ_PSN;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_STATE;
import static dev.rdma4j.internal.ffi.CConstants.IBV_QP_TIMEOUT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * Typed encoders and decoders of {@code struct ibv_qp_init_attr} and {@code struct ibv_qp_attr}: the queue pair's
 * C members by name, and the {@code enum ibv_qp_attr_mask} each transition sets, in this room only. Each
 * transition's writer fills the members it names and returns the mask for {@code ibv_modify_qp}; the values are
 * the caller's, already checked (the API's attribute builders).
 *
 * <p>Threading: stateless; a segment is the caller's.
 */
public final class QpAttrs {
    private static final MemoryLayout INIT = Structs.IBV_QP_INIT_ATTR;
    private static final MemoryLayout ATTR = Structs.IBV_QP_ATTR;

    private QpAttrs() {
    }

    /** A capability of {@code struct ibv_qp_cap}, as {@code ibv_create_qp} writes it back. */
    public enum Cap {
        /** {@code cap.max_send_wr}. */
        MAX_SEND_WR("cap.max_send_wr"),
        /** {@code cap.max_recv_wr}. */
        MAX_RECV_WR("cap.max_recv_wr"),
        /** {@code cap.max_send_sge}. */
        MAX_SEND_SGE("cap.max_send_sge"),
        /** {@code cap.max_recv_sge}. */
        MAX_RECV_SGE("cap.max_recv_sge"),
        /** {@code cap.max_inline_data}. */
        MAX_INLINE_DATA("cap.max_inline_data");

        final String member;

        Cap(String member) {
            this.member = member;
        }

        /** The C member's name without {@code cap.}, for messages. */
        public String cName() {
            return member.substring(4);
        }
    }

    /**
     * A {@code struct ibv_qp_init_attr} for {@code ibv_create_qp}.
     *
     * @param srq null for a QP with a receive queue of its own
     */
    public static MemorySegment init(Arena arena, MemorySegment sendCq, MemorySegment recvCq, MemorySegment srq,
            int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, int qpType,
            boolean signalAll) {
        MemorySegment s = arena.allocate(INIT);
        Codec.putPointer(s, INIT, "send_cq", sendCq);
        Codec.putPointer(s, INIT, "recv_cq", recvCq);
        if (srq != null) {
            Codec.putPointer(s, INIT, "srq", srq);
        }
        Codec.put(s, INIT, Cap.MAX_SEND_WR.member, maxSendWr);
        Codec.put(s, INIT, Cap.MAX_RECV_WR.member, maxRecvWr);
        Codec.put(s, INIT, Cap.MAX_SEND_SGE.member, maxSendSge);
        Codec.put(s, INIT, Cap.MAX_RECV_SGE.member, maxRecvSge);
        Codec.put(s, INIT, Cap.MAX_INLINE_DATA.member, maxInlineData);
        Codec.put(s, INIT, "qp_type", qpType);
        Codec.put(s, INIT, "sq_sig_all", signalAll ? 1 : 0);
        return s;
    }

    /** What {@code ibv_create_qp} (or {@code ibv_query_qp}) wrote into an init attribute's {@code cap}: unsigned. */
    public static long grantedCap(MemorySegment init, Cap cap) {
        return Codec.get(init, INIT, cap.member);
    }

    /** {@code qp->qp_num} of a {@code struct ibv_qp}. */
    public static int qpNum(MemorySegment qp) {
        return (int) Codec.get(qp, Structs.IBV_QP, "qp_num");
    }

    /** A zeroed {@code struct ibv_qp_attr} with {@code qp_state} set (for {@code ibv_modify_qp}). */
    public static MemorySegment attr(Arena arena, int state) {
        MemorySegment s = arena.allocate(ATTR);
        Codec.put(s, ATTR, "qp_state", state);
        return s;
    }

    /** A zeroed {@code struct ibv_qp_attr} and {@code struct ibv_qp_init_attr} for {@code ibv_query_qp}. */
    public static MemorySegment[] forQuery(Arena arena) {
        return new MemorySegment[] {arena.allocate(ATTR), arena.allocate(INIT)};
    }

    /** RESET → INIT: the mask. {@code ud}: the Q_Key, else the access flags. */
    public static int toInit(MemorySegment s, int pkeyIndex, int port, boolean ud, int qkey, int accessFlags) {
        Codec.put(s, ATTR, "pkey_index", pkeyIndex);
        Codec.put(s, ATTR, "port_num", port);
        if (ud) {
            Codec.put(s, ATTR, "qkey", qkey);
            return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
        }
        Codec.put(s, ATTR, "qp_access_flags", accessFlags);
        return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    }

    /**
     * INIT → RTR of a connected QP: the mask. The address vector ({@code ah_attr}) is the caller's to write
     * ({@link AhSrqCqAttrs#encodeAh}); {@code rc}: the responder's resources too.
     */
    public static int toRtr(MemorySegment s, int pathMtu, int destQpn, int rqPsn, boolean rc, int maxDestRdAtomic,
            int minRnrTimer) {
        Codec.put(s, ATTR, "path_mtu", pathMtu);
        Codec.put(s, ATTR, "dest_qp_num", destQpn);
        Codec.put(s, ATTR, "rq_psn", rqPsn);
        if (rc) {
            Codec.put(s, ATTR, "max_dest_rd_atomic", maxDestRdAtomic);
            Codec.put(s, ATTR, "min_rnr_timer", minRnrTimer);
            return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
                    | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        }
        return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    }

    /** RTR → RTS: the mask; {@code rc}: the requester's timeout, retries and resources too. */
    public static int toRts(MemorySegment s, int sqPsn, boolean rc, int timeout, int retryCount, int rnrRetry,
            int maxRdAtomic) {
        Codec.put(s, ATTR, "sq_psn", sqPsn);
        if (rc) {
            Codec.put(s, ATTR, "timeout", timeout);
            Codec.put(s, ATTR, "retry_cnt", retryCount);
            Codec.put(s, ATTR, "rnr_retry", rnrRetry);
            Codec.put(s, ATTR, "max_rd_atomic", maxRdAtomic);
            return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
                    | IBV_QP_MAX_QP_RD_ATOMIC;
        }
        return IBV_QP_STATE | IBV_QP_SQ_PSN;
    }

    /** A transition that sets the state only (INIT → RTR of a UD QP, → ERROR, → RESET): the mask. */
    public static int stateOnly() {
        return IBV_QP_STATE;
    }

    /**
     * What {@code ibv_query_qp} wrote into {@code struct ibv_qp_attr}, each member unsigned, in this order: qp_state,
     * path_mtu, qkey, rq_psn, sq_psn, dest_qp_num, qp_access_flags, the five caps (send/recv WRs, send/recv SGEs,
     * inline data), port_num, pkey_index, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, timeout, retry_cnt,
     * rnr_retry, ah_attr.is_global, ah_attr.grh.sgid_index, ah_attr.grh.hop_limit, ah_attr.dlid.
     */
    public static long[] queried(MemorySegment attr) {
        String[] members = {"qp_state", "path_mtu", "qkey", "rq_psn", "sq_psn", "dest_qp_num", "qp_access_flags",
            Cap.MAX_SEND_WR.member, Cap.MAX_RECV_WR.member, Cap.MAX_SEND_SGE.member, Cap.MAX_RECV_SGE.member,
            Cap.MAX_INLINE_DATA.member, "port_num", "pkey_index", "max_rd_atomic", "max_dest_rd_atomic",
            "min_rnr_timer", "timeout", "retry_cnt", "rnr_retry", "ah_attr.is_global", "ah_attr.grh.sgid_index",
            "ah_attr.grh.hop_limit", "ah_attr.dlid"};
        long[] v = new long[members.length];
        for (int i = 0; i < members.length; i++) {
            v[i] = Codec.get(attr, ATTR, members[i]);
        }
        return v;
    }

    /** The remote GID ({@code ah_attr.grh.dgid}) {@code ibv_query_qp} wrote. */
    public static byte[] queriedDgid(MemorySegment attr) {
        return Codec.getBytes(attr, ATTR, "ah_attr.grh.dgid", 16);
    }
}
