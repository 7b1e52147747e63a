package dev.rdma4j;

/** Link layer of a port ({@code IBV_LINK_LAYER_*}): RoCE ports, Soft-RoCE included, are Ethernet. */
public enum LinkLayer {
    /** {@code IBV_LINK_LAYER_UNSPECIFIED} (old drivers; means InfiniBand). */
    UNSPECIFIED(0),
    /** {@code IBV_LINK_LAYER_INFINIBAND}: addressed by LID. */
    INFINIBAND(1),
    /** {@code IBV_LINK_LAYER_ETHERNET}: RoCE, addressed by GID (GRH required). */
    ETHERNET(2),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(-1);

    private final int code;

    LinkLayer(int code) {
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
    public static LinkLayer of(int code) {
        for (LinkLayer v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        return UNKNOWN;
    }
}
