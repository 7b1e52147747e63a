package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Atomic operation support of a device ({@code enum ibv_atomic_cap}). */
public enum AtomicCapability {
    /** {@code IBV_ATOMIC_NONE}: no atomics. */
    NONE(CEnums.IBV_ATOMIC_NONE),
    /** {@code IBV_ATOMIC_HCA}: atomic among operations of this device. */
    HCA(CEnums.IBV_ATOMIC_HCA),
    /** {@code IBV_ATOMIC_GLOB}: atomic also against the CPU and other devices. */
    GLOB(CEnums.IBV_ATOMIC_GLOB),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C);

    private static final AtomicCapability[] BY_CODE = EnumCodes.byCode(values(), AtomicCapability::code, UNKNOWN);

    private final int code;

    AtomicCapability(int code) {
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
    public static AtomicCapability of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
