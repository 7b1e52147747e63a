package dev.rdma4j.internal.ffi;

/**
 * The kernel IB CM's numbers: its reject reasons ({@code enum ib_cm_rej_reason} of {@code <rdma/ib_cm.h>}), the
 * positive status of an {@code RDMA_CM_EVENT_REJECTED} event on InfiniBand or RoCE, and the private data sizes of
 * its messages. Those headers are the kernel's own, not installed with rdma-core's, so gcc cannot compare these:
 * they are written here once, as the kernel has them (the name table's index is the value); {@code CmExceptionTest}
 * checks the two named reasons against the table, the device tests the sizes ({@code CmFindingsDeviceTest}).
 *
 * <p>Threading: constants and an immutable table.
 */
public final class IbCm {
    private IbCm() {
    }

    /** {@code IB_CM_REJ_INVALID_SERVICE_ID}: nothing listens on the port (no such service id). */
    public static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    /** {@code IB_CM_REJ_CONSUMER_DEFINED}: the reject of {@code rdma_reject}, by the peer's application. */
    public static final int IB_CM_REJ_CONSUMER_DEFINED = 28;

    /** {@code IB_CM_REQ_PRIVATE_DATA_SIZE}: the private data of a connect request (REQ). */
    public static final int IB_CM_REQ_PRIVATE_DATA_SIZE = 92;
    /** {@code IB_CM_REP_PRIVATE_DATA_SIZE}: the private data of a connect reply (REP), all {@code rdma_accept}'s. */
    public static final int IB_CM_REP_PRIVATE_DATA_SIZE = 196;
    /** {@code IB_CM_REJ_PRIVATE_DATA_SIZE}: the private data of a reject (REJ), all {@code rdma_reject}'s. */
    public static final int IB_CM_REJ_PRIVATE_DATA_SIZE = 148;
    /** {@code sizeof(struct cma_hdr)}: the kernel rdma_cm's header at the head of a REQ's private data. */
    public static final int CMA_HDR_SIZE = 36;
    /** What {@code rdma_connect} leaves the caller of a REQ's private data: 56 bytes. */
    public static final int RDMA_CONNECT_PRIVATE_DATA_SIZE = IB_CM_REQ_PRIVATE_DATA_SIZE - CMA_HDR_SIZE;

    /** {@code enum ib_cm_rej_reason}'s names without {@code IB_CM_REJ_}, index = value ({@code null}: none). */
    private static final String[] REJECT_REASONS = {null, "NO_QP", "NO_EEC", "NO_RESOURCES", "TIMEOUT", "UNSUPPORTED",
        "INVALID_COMM_ID", "INVALID_COMM_INSTANCE", "INVALID_SERVICE_ID", "INVALID_TRANSPORT_TYPE", "STALE_CONN",
        "RDC_NOT_EXIST", "INVALID_GID", "INVALID_LID", "INVALID_SL", "INVALID_TRAFFIC_CLASS", "INVALID_HOP_LIMIT",
        "INVALID_PACKET_RATE", "INVALID_ALT_GID", "INVALID_ALT_LID", "INVALID_ALT_SL", "INVALID_ALT_TRAFFIC_CLASS",
        "INVALID_ALT_HOP_LIMIT", "INVALID_ALT_PACKET_RATE", "PORT_CM_REDIRECT", "PORT_REDIRECT", "INVALID_MTU",
        "INSUFFICIENT_RESP_RESOURCES", "CONSUMER_DEFINED", "INVALID_RNR_RETRY", "DUPLICATE_LOCAL_COMM_ID",
        "INVALID_CLASS_VERSION", "INVALID_FLOW_LABEL", "INVALID_ALT_FLOW_LABEL", null, "VENDOR_OPTION_NOT_SUPPORTED"};

    /**
     * The name of a reject reason.
     *
     * @param reason the event's positive status
     * @return e.g. {@code "INVALID_SERVICE_ID"} for 8, or {@code null} for a value the kernel does not name
     */
    public static String rejectReason(int reason) {
        return reason > 0 && reason < REJECT_REASONS.length ? REJECT_REASONS[reason] : null;
    }
}
