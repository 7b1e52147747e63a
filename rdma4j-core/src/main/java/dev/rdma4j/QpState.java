package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Queue pair state ({@code enum ibv_qp_state}); the usual path is RESET → INIT → RTR → RTS. */
public enum QpState {
    /** {@code IBV_QPS_RESET}: just created, or reset; nothing can be posted. */
    RESET(CEnums.IBV_QPS_RESET),
    /** {@code IBV_QPS_INIT}: receives can be posted. */
    INIT(CEnums.IBV_QPS_INIT),
    /** {@code IBV_QPS_RTR}: ready to receive. */
    RTR(CEnums.IBV_QPS_RTR),
    /** {@code IBV_QPS_RTS}: ready to send. */
    RTS(CEnums.IBV_QPS_RTS),
    /** {@code IBV_QPS_SQD}: send queue drained. */
    SQD(CEnums.IBV_QPS_SQD),
    /** {@code IBV_QPS_SQE}: send queue error (UC/UD). */
    SQE(CEnums.IBV_QPS_SQE),
    /** {@code IBV_QPS_ERR}: outstanding and new requests complete with {@code WR_FLUSH_ERR}. */
    ERROR(CEnums.IBV_QPS_ERR),
    /** {@code IBV_QPS_UNKNOWN}, or a value this version does not know. */
    UNKNOWN(CEnums.IBV_QPS_UNKNOWN);

    private static final QpState[] BY_CODE = EnumCodes.byCode(values(), QpState::code, UNKNOWN);

    private final int code;

    QpState(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_qp_state} number
     */
    public int code() {
        return code;
    }

    /**
     * Maps a C value; allocation-free.
     *
     * @param code the number
     * @return the state, or {@code UNKNOWN}
     */
    public static QpState of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
