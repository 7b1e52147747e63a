package dev.rdma4j;

/** Atomic operation support of a device ({@code enum ibv_atomic_cap}). */
public enum AtomicCapability {
    /** {@code IBV_ATOMIC_NONE}: no atomics. */
    NONE(0),
    /** {@code IBV_ATOMIC_HCA}: atomic among operations of this device. */
    HCA(1),
    /** {@code IBV_ATOMIC_GLOB}: atomic also against the CPU and other devices. */
    GLOB(2),
    /** A value this version of rdma4j does not know. */
    UNKNOWN(-1);

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
        for (AtomicCapability v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        return UNKNOWN;
    }
}
