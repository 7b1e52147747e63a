package dev.rdma4j;

import dev.rdma4j.internal.ffi.CEnums;

/** Queue pair transport ({@code enum ibv_qp_type}); XRC is not supported (Soft-RoCE lacks it). */
public enum QpType {
    /** Reliable connected, {@code IBV_QPT_RC}: all operations, delivery guaranteed in order. */
    RC(CEnums.IBV_QPT_RC),
    /** Unreliable connected, {@code IBV_QPT_UC}: send and RDMA write, no read or atomics. */
    UC(CEnums.IBV_QPT_UC),
    /** Unreliable datagram, {@code IBV_QPT_UD}: sends of at most one MTU through address handles. */
    UD(CEnums.IBV_QPT_UD);

    private final int code;

    QpType(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_qp_type} number
     */
    public int code() {
        return code;
    }
}
