package dev.rdma4j;

/** Node type of a device ({@code enum ibv_node_type}, from {@code ibv_device.node_type}). */
public enum NodeType {
    /** A channel adapter (HCA or RNIC), {@code IBV_NODE_CA}. */
    CA(1),
    /** {@code IBV_NODE_SWITCH}. */
    SWITCH(2),
    /** {@code IBV_NODE_ROUTER}. */
    ROUTER(3),
    /** {@code IBV_NODE_RNIC} (iWARP). */
    RNIC(4),
    /** {@code IBV_NODE_USNIC}. */
    USNIC(5),
    /** {@code IBV_NODE_USNIC_UDP}. */
    USNIC_UDP(6),
    /** {@code IBV_NODE_UNSPECIFIED}. */
    UNSPECIFIED(7),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(-1);

    private final int code;

    NodeType(int code) {
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
    public static NodeType of(int code) {
        for (NodeType v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        return UNKNOWN;
    }
}
