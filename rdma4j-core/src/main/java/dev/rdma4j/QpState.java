package dev.rdma4j;

/** Queue pair state ({@code enum ibv_qp_state}); the usual path is RESET → INIT → RTR → RTS. */
public enum QpState {
    /** {@code IBV_QPS_RESET}: just created, or reset; nothing can be posted. */
    RESET,
    /** {@code IBV_QPS_INIT}: receives can be posted. */
    INIT,
    /** {@code IBV_QPS_RTR}: ready to receive. */
    RTR,
    /** {@code IBV_QPS_RTS}: ready to send. */
    RTS,
    /** {@code IBV_QPS_SQD}: send queue drained. */
    SQD,
    /** {@code IBV_QPS_SQE}: send queue error (UC/UD). */
    SQE,
    /** {@code IBV_QPS_ERR}: outstanding and new requests complete with {@code WR_FLUSH_ERR}. */
    ERROR,
    /** {@code IBV_QPS_UNKNOWN}, or a value this version does not know. */
    UNKNOWN;

    /**
     * The C value.
     *
     * @return the {@code ibv_qp_state} number
     */
    public int code() {
        return ordinal();
    }

    /**
     * Maps a C value.
     *
     * @param code the number
     * @return the state
     */
    public static QpState of(int code) {
        return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
    }
}
