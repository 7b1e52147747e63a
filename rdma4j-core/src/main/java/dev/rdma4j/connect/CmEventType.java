package dev.rdma4j.connect;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** rdma_cm event types ({@code enum rdma_cm_event_type}). */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}. */
    ADDR_RESOLVED(CEnums.RDMA_CM_EVENT_ADDR_RESOLVED),
    /** {@code RDMA_CM_EVENT_ADDR_ERROR}. */
    ADDR_ERROR(CEnums.RDMA_CM_EVENT_ADDR_ERROR),
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    ROUTE_RESOLVED(CEnums.RDMA_CM_EVENT_ROUTE_RESOLVED),
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
    ROUTE_ERROR(CEnums.RDMA_CM_EVENT_ROUTE_ERROR),
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}: a peer wants to connect to a listener. */
    CONNECT_REQUEST(CEnums.RDMA_CM_EVENT_CONNECT_REQUEST),
    /** {@code RDMA_CM_EVENT_CONNECT_RESPONSE}. */
    CONNECT_RESPONSE(CEnums.RDMA_CM_EVENT_CONNECT_RESPONSE),
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
    CONNECT_ERROR(CEnums.RDMA_CM_EVENT_CONNECT_ERROR),
    /** {@code RDMA_CM_EVENT_UNREACHABLE}: the peer did not answer. */
    UNREACHABLE(CEnums.RDMA_CM_EVENT_UNREACHABLE),
    /** {@code RDMA_CM_EVENT_REJECTED}: the peer (or its CM, when nothing listens) rejected the connection. */
    REJECTED(CEnums.RDMA_CM_EVENT_REJECTED),
    /** {@code RDMA_CM_EVENT_ESTABLISHED}: connected; the queue pair is in RTS. */
    ESTABLISHED(CEnums.RDMA_CM_EVENT_ESTABLISHED),
    /** {@code RDMA_CM_EVENT_DISCONNECTED}: either side disconnected; the queue pair is in ERROR. */
    DISCONNECTED(CEnums.RDMA_CM_EVENT_DISCONNECTED),
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    DEVICE_REMOVAL(CEnums.RDMA_CM_EVENT_DEVICE_REMOVAL),
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}. */
    MULTICAST_JOIN(CEnums.RDMA_CM_EVENT_MULTICAST_JOIN),
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}. */
    MULTICAST_ERROR(CEnums.RDMA_CM_EVENT_MULTICAST_ERROR),
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}. */
    ADDR_CHANGE(CEnums.RDMA_CM_EVENT_ADDR_CHANGE),
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}. */
    TIMEWAIT_EXIT(CEnums.RDMA_CM_EVENT_TIMEWAIT_EXIT),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final CmEventType[] BY_CODE = EnumCodes.byCode(values(), CmEventType::code, UNKNOWN);

    private final int code;

    CmEventType(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code rdma_cm_event_type} number ({@code -1} for {@code UNKNOWN})
     */
    public int code() {
        return code;
    }

    /**
     * Maps the C value.
     *
     * @param code the {@code rdma_cm_event_type} number
     * @return the type, or {@code UNKNOWN}
     */
    public static CmEventType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
