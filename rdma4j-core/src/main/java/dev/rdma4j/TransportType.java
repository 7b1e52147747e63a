package dev.rdma4j;

/** Transport of a device ({@code enum ibv_transport_type}); Soft-RoCE reports {@code IB}. */
public enum TransportType {
    /** InfiniBand transport (also RoCE), {@code IBV_TRANSPORT_IB}. */
    IB(0),
    /** {@code IBV_TRANSPORT_IWARP}. */
    IWARP(1),
    /** {@code IBV_TRANSPORT_USNIC}. */
    USNIC(2),
    /** {@code IBV_TRANSPORT_USNIC_UDP}. */
    USNIC_UDP(3),
    /** {@code IBV_TRANSPORT_UNSPECIFIED}. */
    UNSPECIFIED(4),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(-1);

    private final int code;

    TransportType(int code) {
        this.code = code;
    }

    /**
     * The C enum value.
     *
     * @return the numeric value used by libibverbs ({@code -1} for {@code UNKNOWN})
     */
    public int code() {
        return code;
    }

    /**
     * Maps a C enum value.
     *
     * @param code the numeric value from libibverbs
     * @return the constant, or {@code UNKNOWN} for a value this version does not know
     */
    public static TransportType of(int code) {
        for (TransportType v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        return UNKNOWN;
    }
}
