package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Node type of a device ({@code enum ibv_node_type}, from {@code ibv_device.node_type}). */
public enum NodeType {
    /** A channel adapter (HCA or RNIC), {@code IBV_NODE_CA}. */
    CA(CEnums.IBV_NODE_CA),
    /** {@code IBV_NODE_SWITCH}. */
    SWITCH(CEnums.IBV_NODE_SWITCH),
    /** {@code IBV_NODE_ROUTER}. */
    ROUTER(CEnums.IBV_NODE_ROUTER),
    /** {@code IBV_NODE_RNIC} (iWARP). */
    RNIC(CEnums.IBV_NODE_RNIC),
    /** {@code IBV_NODE_USNIC}. */
    USNIC(CEnums.IBV_NODE_USNIC),
    /** {@code IBV_NODE_USNIC_UDP}. */
    USNIC_UDP(CEnums.IBV_NODE_USNIC_UDP),
    /** {@code IBV_NODE_UNSPECIFIED}. */
    UNSPECIFIED(CEnums.IBV_NODE_UNSPECIFIED),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(CEnums.IBV_NODE_UNKNOWN);

    private static final NodeType[] BY_CODE = EnumCodes.byCode(values(), NodeType::code, UNKNOWN);

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
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
