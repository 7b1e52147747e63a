package dev.rdma4j;

/** Logical port state ({@code enum ibv_port_state}); only {@code ACTIVE} carries traffic. */
public enum PortState {
    /** {@code IBV_PORT_NOP}. */
    NOP(0),
    /** {@code IBV_PORT_DOWN}: no link. */
    DOWN(1),
    /** {@code IBV_PORT_INIT}: link up, not yet configured by the subnet manager. */
    INIT(2),
    /** {@code IBV_PORT_ARMED}. */
    ARMED(3),
    /** {@code IBV_PORT_ACTIVE}: ready for traffic. */
    ACTIVE(4),
    /** {@code IBV_PORT_ACTIVE_DEFER}. */
    ACTIVE_DEFER(5),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(-1);

    private final int code;

    PortState(int code) {
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
    public static PortState of(int code) {
        for (PortState v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        return UNKNOWN;
    }
}
