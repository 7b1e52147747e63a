package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Type of a GID table entry ({@code enum ibv_gid_type}). */
public enum GidType {
    /** InfiniBand GID, {@code IBV_GID_TYPE_IB}. */
    IB(CEnums.IBV_GID_TYPE_IB),
    /** RoCE v1 (Ethernet, {@code IBV_GID_TYPE_ROCE_V1}); sysfs calls it "IB/RoCE v1". */
    ROCE_V1(CEnums.IBV_GID_TYPE_ROCE_V1),
    /** RoCE v2 (UDP/IP, {@code IBV_GID_TYPE_ROCE_V2}): routable, what rdma4j prefers. */
    ROCE_V2(CEnums.IBV_GID_TYPE_ROCE_V2),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final GidType[] BY_CODE = EnumCodes.byCode(values(), GidType::code, UNKNOWN);

    private final int code;

    GidType(int code) {
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
    public static GidType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
