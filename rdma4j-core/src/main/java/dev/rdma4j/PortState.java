package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Logical port state ({@code enum ibv_port_state}); only {@code ACTIVE} carries traffic. */
public enum PortState {
    /** {@code IBV_PORT_NOP}. */
    NOP(CEnums.IBV_PORT_NOP),
    /** {@code IBV_PORT_DOWN}: no link. */
    DOWN(CEnums.IBV_PORT_DOWN),
    /** {@code IBV_PORT_INIT}: link up, not yet configured by the subnet manager. */
    INIT(CEnums.IBV_PORT_INIT),
    /** {@code IBV_PORT_ARMED}. */
    ARMED(CEnums.IBV_PORT_ARMED),
    /** {@code IBV_PORT_ACTIVE}: ready for traffic. */
    ACTIVE(CEnums.IBV_PORT_ACTIVE),
    /** {@code IBV_PORT_ACTIVE_DEFER}. */
    ACTIVE_DEFER(CEnums.IBV_PORT_ACTIVE_DEFER),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final PortState[] BY_CODE = EnumCodes.byCode(values(), PortState::code, UNKNOWN);

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
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
