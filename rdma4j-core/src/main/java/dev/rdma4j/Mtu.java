package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** Path MTU of a port or queue pair ({@code enum ibv_mtu}). */
public enum Mtu {
    /** {@code IBV_MTU_256}. */
    MTU_256(CEnums.IBV_MTU_256, 256),
    /** {@code IBV_MTU_512}. */
    MTU_512(CEnums.IBV_MTU_512, 512),
    /** {@code IBV_MTU_1024}: the usual active MTU of Soft-RoCE over a 1500-byte netdev. */
    MTU_1024(CEnums.IBV_MTU_1024, 1024),
    /** {@code IBV_MTU_2048}. */
    MTU_2048(CEnums.IBV_MTU_2048, 2048),
    /** {@code IBV_MTU_4096}. */
    MTU_4096(CEnums.IBV_MTU_4096, 4096),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(EnumCodes.NOT_C, 0);

    private static final Mtu[] BY_CODE = EnumCodes.byCode(values(), Mtu::code, UNKNOWN);

    private final int code;
    private final int bytes;

    Mtu(int code, int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    /**
     * The C enum value.
     *
     * @return 1 for {@code IBV_MTU_256} up to 5 for {@code IBV_MTU_4096}
     */
    public int code() {
        return code;
    }

    /**
     * The MTU in bytes.
     *
     * @return 256 to 4096, or 0 for {@code UNKNOWN}
     */
    public int bytes() {
        return bytes;
    }

    /**
     * Maps a C enum value.
     *
     * @param code the {@code enum ibv_mtu} value
     * @return the constant, or {@code UNKNOWN}
     */
    public static Mtu of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }

    /**
     * The MTU for a size in bytes, as the pingpong tools' {@code -m} flag takes it.
     *
     * @param bytes 256, 512, 1024, 2048 or 4096
     * @return the constant
     * @throws IllegalArgumentException for any other size
     */
    public static Mtu ofBytes(int bytes) {
        for (Mtu m : values()) {
            if (m.bytes == bytes && m != UNKNOWN) {
                return m;
            }
        }
        throw new IllegalArgumentException("not an RDMA MTU: " + bytes + " (256, 512, 1024, 2048 or 4096)");
    }

    /**
     * The smaller of two MTUs, as the RTR transition picks the path MTU.
     *
     * @param other the other side's MTU
     * @return the smaller one
     */
    public Mtu min(Mtu other) {
        return other.code < code ? other : this;
    }
}
