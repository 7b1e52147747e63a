package dev.rdma4j.connect;

/** rdma_cm event types ({@code enum rdma_cm_event_type}). */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}. */
    ADDR_RESOLVED,
    /** {@code RDMA_CM_EVENT_ADDR_ERROR}. */
    ADDR_ERROR,
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    ROUTE_RESOLVED,
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
    ROUTE_ERROR,
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}: a peer wants to connect to a listener. */
    CONNECT_REQUEST,
    /** {@code RDMA_CM_EVENT_CONNECT_RESPONSE}. */
    CONNECT_RESPONSE,
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
    CONNECT_ERROR,
    /** {@code RDMA_CM_EVENT_UNREACHABLE}: the peer did not answer. */
    UNREACHABLE,
    /** {@code RDMA_CM_EVENT_REJECTED}: the peer (or its CM, when nothing listens) rejected the connection. */
    REJECTED,
    /** {@code RDMA_CM_EVENT_ESTABLISHED}: connected; the queue pair is in RTS. */
    ESTABLISHED,
    /** {@code RDMA_CM_EVENT_DISCONNECTED}: either side disconnected; the queue pair is in ERROR. */
    DISCONNECTED,
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    DEVICE_REMOVAL,
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}. */
    MULTICAST_JOIN,
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}. */
    MULTICAST_ERROR,
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}. */
    ADDR_CHANGE,
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}. */
    TIMEWAIT_EXIT,
    /** A value this version of rdma4j does not know. */
    UNKNOWN;

    /**
     * Maps the C value.
     *
     * @param code the {@code rdma_cm_event_type} number
     * @return the type
     */
    public static CmEventType of(int code) {
        return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
    }
}
