package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Link layer of a port ({@code IBV_LINK_LAYER_*}): RoCE ports, Soft-RoCE included, are Ethernet. */
public enum LinkLayer {
    /** {@code IBV_LINK_LAYER_UNSPECIFIED} (old drivers; means InfiniBand). */
    UNSPECIFIED(CEnums.IBV_LINK_LAYER_UNSPECIFIED),
    /** {@code IBV_LINK_LAYER_INFINIBAND}: addressed by LID. */
    INFINIBAND(CEnums.IBV_LINK_LAYER_INFINIBAND),
    /** {@code IBV_LINK_LAYER_ETHERNET}: RoCE, addressed by GID (GRH required). */
    ETHERNET(CEnums.IBV_LINK_LAYER_ETHERNET),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final LinkLayer[] BY_CODE = EnumCodes.byCode(values(), LinkLayer::code, UNKNOWN);

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
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
