package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Transport of a device ({@code enum ibv_transport_type}); Soft-RoCE reports {@code IB}. */
public enum TransportType {
    /** InfiniBand transport (also RoCE), {@code IBV_TRANSPORT_IB}. */
    IB(CEnums.IBV_TRANSPORT_IB),
    /** {@code IBV_TRANSPORT_IWARP}. */
    IWARP(CEnums.IBV_TRANSPORT_IWARP),
    /** {@code IBV_TRANSPORT_USNIC}. */
    USNIC(CEnums.IBV_TRANSPORT_USNIC),
    /** {@code IBV_TRANSPORT_USNIC_UDP}. */
    USNIC_UDP(CEnums.IBV_TRANSPORT_USNIC_UDP),
    /** {@code IBV_TRANSPORT_UNSPECIFIED}. */
    UNSPECIFIED(CEnums.IBV_TRANSPORT_UNSPECIFIED),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(CEnums.IBV_TRANSPORT_UNKNOWN);

    private static final TransportType[] BY_CODE = EnumCodes.byCode(values(), TransportType::code, UNKNOWN);

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
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
