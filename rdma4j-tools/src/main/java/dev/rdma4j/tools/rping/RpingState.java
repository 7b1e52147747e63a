package dev.rdma4j.tools.rping;

/**
 * The C tool's {@code enum test_state}: its numbers appear in its error messages ("wait for
 * RDMA_READ_ADV state 10" when the peer disconnected), which rdma4j prints alike.
 */
enum RpingState {
    /** Nothing yet. */
    IDLE(1),
    /** Server: a connection request arrived. */
    CONNECT_REQUEST(2),
    /** Client: the address is resolved. */
    ADDR_RESOLVED(3),
    /** Client: the route is resolved. */
    ROUTE_RESOLVED(4),
    /** Client: established. */
    CONNECTED(5),
    /** A source buffer descriptor arrived (server), or was sent (client). */
    RDMA_READ_ADV(6),
    /** Server: the RDMA read completed. */
    RDMA_READ_COMPLETE(7),
    /** A sink buffer descriptor arrived (server), or the server's first go-ahead (client). */
    RDMA_WRITE_ADV(8),
    /** Server: the RDMA write completed; client: the server's second go-ahead arrived. */
    RDMA_WRITE_COMPLETE(9),
    /** The connection went down (RDMA_CM_EVENT_DISCONNECTED). */
    DISCONNECTED(10),
    /** A work request failed. */
    ERROR(11);

    private final int code;

    RpingState(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return e.g. 10 for {@link #DISCONNECTED}
     */
    int code() {
        return code;
    }
}
