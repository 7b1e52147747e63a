package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;
import dev.rdma4j.internal.ffi.ResourceVerbs;

/** The status of a work completion ({@code enum ibv_wc_status}); {@link #text()} is {@code ibv_wc_status_str}. */
public enum WcStatus {
    /** {@code IBV_WC_SUCCESS}. */
    SUCCESS(CEnums.IBV_WC_SUCCESS),
    /** {@code IBV_WC_LOC_LEN_ERR}: e.g. a receive buffer too small for the message. */
    LOC_LEN_ERR(CEnums.IBV_WC_LOC_LEN_ERR),
    /** {@code IBV_WC_LOC_QP_OP_ERR}. */
    LOC_QP_OP_ERR(CEnums.IBV_WC_LOC_QP_OP_ERR),
    /** {@code IBV_WC_LOC_EEC_OP_ERR}. */
    LOC_EEC_OP_ERR(CEnums.IBV_WC_LOC_EEC_OP_ERR),
    /** {@code IBV_WC_LOC_PROT_ERR}: a local key or region does not allow the access. */
    LOC_PROT_ERR(CEnums.IBV_WC_LOC_PROT_ERR),
    /** {@code IBV_WC_WR_FLUSH_ERR}: flushed because the queue pair went to the error state. */
    WR_FLUSH_ERR(CEnums.IBV_WC_WR_FLUSH_ERR),
    /** {@code IBV_WC_MW_BIND_ERR}. */
    MW_BIND_ERR(CEnums.IBV_WC_MW_BIND_ERR),
    /** {@code IBV_WC_BAD_RESP_ERR}. */
    BAD_RESP_ERR(CEnums.IBV_WC_BAD_RESP_ERR),
    /** {@code IBV_WC_LOC_ACCESS_ERR}. */
    LOC_ACCESS_ERR(CEnums.IBV_WC_LOC_ACCESS_ERR),
    /** {@code IBV_WC_REM_INV_REQ_ERR}: the responder rejected the request (e.g. out of its bounds). */
    REM_INV_REQ_ERR(CEnums.IBV_WC_REM_INV_REQ_ERR),
    /** {@code IBV_WC_REM_ACCESS_ERR}: bad rkey or rights at the responder. */
    REM_ACCESS_ERR(CEnums.IBV_WC_REM_ACCESS_ERR),
    /** {@code IBV_WC_REM_OP_ERR}. */
    REM_OP_ERR(CEnums.IBV_WC_REM_OP_ERR),
    /** {@code IBV_WC_RETRY_EXC_ERR}: transport retries exhausted (peer gone). */
    RETRY_EXC_ERR(CEnums.IBV_WC_RETRY_EXC_ERR),
    /** {@code IBV_WC_RNR_RETRY_EXC_ERR}: the peer had no receive posted, RNR retries exhausted. */
    RNR_RETRY_EXC_ERR(CEnums.IBV_WC_RNR_RETRY_EXC_ERR),
    /** {@code IBV_WC_LOC_RDD_VIOL_ERR}. */
    LOC_RDD_VIOL_ERR(CEnums.IBV_WC_LOC_RDD_VIOL_ERR),
    /** {@code IBV_WC_REM_INV_RD_REQ_ERR}. */
    REM_INV_RD_REQ_ERR(CEnums.IBV_WC_REM_INV_RD_REQ_ERR),
    /** {@code IBV_WC_REM_ABORT_ERR}. */
    REM_ABORT_ERR(CEnums.IBV_WC_REM_ABORT_ERR),
    /** {@code IBV_WC_INV_EECN_ERR}. */
    INV_EECN_ERR(CEnums.IBV_WC_INV_EECN_ERR),
    /** {@code IBV_WC_INV_EEC_STATE_ERR}. */
    INV_EEC_STATE_ERR(CEnums.IBV_WC_INV_EEC_STATE_ERR),
    /** {@code IBV_WC_FATAL_ERR}. */
    FATAL_ERR(CEnums.IBV_WC_FATAL_ERR),
    /** {@code IBV_WC_RESP_TIMEOUT_ERR}. */
    RESP_TIMEOUT_ERR(CEnums.IBV_WC_RESP_TIMEOUT_ERR),
    /** {@code IBV_WC_GENERAL_ERR}. */
    GENERAL_ERR(CEnums.IBV_WC_GENERAL_ERR),
    /** {@code IBV_WC_TM_ERR}. */
    TM_ERR(CEnums.IBV_WC_TM_ERR),
    /** {@code IBV_WC_TM_RNDV_INCOMPLETE}. */
    TM_RNDV_INCOMPLETE(CEnums.IBV_WC_TM_RNDV_INCOMPLETE),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final WcStatus[] BY_CODE = EnumCodes.byCode(values(), WcStatus::code, UNKNOWN);

    private final int code;

    WcStatus(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_wc_status} number
     */
    public int code() {
        return code;
    }

    /**
     * Maps a C value; allocation-free.
     *
     * @param code the {@code ibv_wc_status} number
     * @return the constant, or {@code UNKNOWN}
     */
    public static WcStatus of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }

    /**
     * The description libibverbs gives ({@code ibv_wc_status_str}), e.g. "remote access error".
     *
     * @return the text
     */
    public String text() {
        String t = text; // racy but idempotent: every thread computes the same string
        if (t == null) {
            text = t = ResourceVerbs.wcStatusStr(code());
        }
        return t;
    }

    /** {@code ibv_wc_status_str}'s text, once asked for (a downcall each time otherwise: every flushed request). */
    private String text;
}
