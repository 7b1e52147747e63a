package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/**
 * Kinds of asynchronous events ({@code enum ibv_event_type}), and which object each concerns.
 */
public enum AsyncEventType {
    /** {@code IBV_EVENT_CQ_ERR}: a CQ overran; about a {@link CompletionQueue}. */
    CQ_ERR(CEnums.IBV_EVENT_CQ_ERR, Element.CQ),
    /** {@code IBV_EVENT_QP_FATAL}: the QP went to ERROR. */
    QP_FATAL(CEnums.IBV_EVENT_QP_FATAL, Element.QP),
    /** {@code IBV_EVENT_QP_REQ_ERR}: invalid request; the QP went to ERROR. */
    QP_REQ_ERR(CEnums.IBV_EVENT_QP_REQ_ERR, Element.QP),
    /** {@code IBV_EVENT_QP_ACCESS_ERR}: access violation; the QP went to ERROR. */
    QP_ACCESS_ERR(CEnums.IBV_EVENT_QP_ACCESS_ERR, Element.QP),
    /** {@code IBV_EVENT_COMM_EST}: first packet received in RTR. */
    COMM_EST(CEnums.IBV_EVENT_COMM_EST, Element.QP),
    /** {@code IBV_EVENT_SQ_DRAINED}. */
    SQ_DRAINED(CEnums.IBV_EVENT_SQ_DRAINED, Element.QP),
    /** {@code IBV_EVENT_PATH_MIG}. */
    PATH_MIG(CEnums.IBV_EVENT_PATH_MIG, Element.QP),
    /** {@code IBV_EVENT_PATH_MIG_ERR}. */
    PATH_MIG_ERR(CEnums.IBV_EVENT_PATH_MIG_ERR, Element.QP),
    /** {@code IBV_EVENT_DEVICE_FATAL}: the device is unusable; close everything. */
    DEVICE_FATAL(CEnums.IBV_EVENT_DEVICE_FATAL, Element.DEVICE),
    /** {@code IBV_EVENT_PORT_ACTIVE}: a port became active. */
    PORT_ACTIVE(CEnums.IBV_EVENT_PORT_ACTIVE, Element.PORT),
    /** {@code IBV_EVENT_PORT_ERR}: a port left the active state (e.g. link down). */
    PORT_ERR(CEnums.IBV_EVENT_PORT_ERR, Element.PORT),
    /** {@code IBV_EVENT_LID_CHANGE}. */
    LID_CHANGE(CEnums.IBV_EVENT_LID_CHANGE, Element.PORT),
    /** {@code IBV_EVENT_PKEY_CHANGE}. */
    PKEY_CHANGE(CEnums.IBV_EVENT_PKEY_CHANGE, Element.PORT),
    /** {@code IBV_EVENT_SM_CHANGE}. */
    SM_CHANGE(CEnums.IBV_EVENT_SM_CHANGE, Element.PORT),
    /** {@code IBV_EVENT_SRQ_ERR}: the SRQ is in error and can only be destroyed. */
    SRQ_ERR(CEnums.IBV_EVENT_SRQ_ERR, Element.SRQ),
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}: fewer receives posted than the armed limit; the limit is now 0. */
    SRQ_LIMIT_REACHED(CEnums.IBV_EVENT_SRQ_LIMIT_REACHED, Element.SRQ),
    /** {@code IBV_EVENT_QP_LAST_WQE_REACHED}: an SRQ-attached QP in ERROR will consume no more receives. */
    QP_LAST_WQE_REACHED(CEnums.IBV_EVENT_QP_LAST_WQE_REACHED, Element.QP),
    /** {@code IBV_EVENT_CLIENT_REREGISTER}. */
    CLIENT_REREGISTER(CEnums.IBV_EVENT_CLIENT_REREGISTER, Element.PORT),
    /** {@code IBV_EVENT_GID_CHANGE}: the port's GID table changed. */
    GID_CHANGE(CEnums.IBV_EVENT_GID_CHANGE, Element.PORT),
    /** {@code IBV_EVENT_WQ_FATAL}. */
    WQ_FATAL(CEnums.IBV_EVENT_WQ_FATAL, Element.WQ),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C, Element.DEVICE);

    /** The kind of object an event is about ({@code ibv_async_event.element}). */
    public enum Element {
        /** A completion queue. */
        CQ,
        /** A queue pair. */
        QP,
        /** A shared receive queue. */
        SRQ,
        /** A work queue. */
        WQ,
        /** A port (the event carries its number). */
        PORT,
        /** The whole device. */
        DEVICE
    }

    private static final AsyncEventType[] BY_CODE = EnumCodes.byCode(values(), AsyncEventType::code, UNKNOWN);

    private final int code;
    private final Element element;

    AsyncEventType(int code, Element element) {
        this.code = code;
        this.element = element;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_event_type} number ({@code -1} for {@code UNKNOWN})
     */
    public int code() {
        return code;
    }

    /**
     * What the event is about.
     *
     * @return the element kind
     */
    public Element element() {
        return element;
    }

    /**
     * Maps the C value.
     *
     * @param code the {@code ibv_event_type} number
     * @return the type, or {@code UNKNOWN}
     */
    public static AsyncEventType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
