package dev.rdma4j;

import dev.rdma4j.internal.ffi.CEnums;
import java.util.Set;

/** Memory region and queue pair access rights ({@code enum ibv_access_flags}). */
public enum AccessFlag {
    /** {@code IBV_ACCESS_LOCAL_WRITE}: the device may write the region (receives, RDMA read results, atomics). */
    LOCAL_WRITE(CEnums.IBV_ACCESS_LOCAL_WRITE),
    /** {@code IBV_ACCESS_REMOTE_WRITE}: peers may RDMA-write into it; requires {@link #LOCAL_WRITE}. */
    REMOTE_WRITE(CEnums.IBV_ACCESS_REMOTE_WRITE),
    /** {@code IBV_ACCESS_REMOTE_READ}: peers may RDMA-read it. */
    REMOTE_READ(CEnums.IBV_ACCESS_REMOTE_READ),
    /** {@code IBV_ACCESS_REMOTE_ATOMIC}: peers may run atomics on it; requires {@link #LOCAL_WRITE}. */
    REMOTE_ATOMIC(CEnums.IBV_ACCESS_REMOTE_ATOMIC),
    /** {@code IBV_ACCESS_MW_BIND}. */
    MW_BIND(CEnums.IBV_ACCESS_MW_BIND),
    /** {@code IBV_ACCESS_ZERO_BASED}. */
    ZERO_BASED(CEnums.IBV_ACCESS_ZERO_BASED),
    /** {@code IBV_ACCESS_ON_DEMAND}: on-demand paging, where the device supports it. */
    ON_DEMAND(CEnums.IBV_ACCESS_ON_DEMAND),
    /** {@code IBV_ACCESS_HUGETLB}. */
    HUGETLB(CEnums.IBV_ACCESS_HUGETLB),
    /** {@code IBV_ACCESS_RELAXED_ORDERING}: optional; registered through {@code ibv_reg_mr_iova2}. */
    RELAXED_ORDERING(CEnums.IBV_ACCESS_RELAXED_ORDERING);

    private final int bit;

    AccessFlag(int bit) {
        this.bit = bit;
    }

    /**
     * The C bit.
     *
     * @return the {@code IBV_ACCESS_*} value
     */
    public int bit() {
        return bit;
    }

    /**
     * The C mask of a set of flags.
     *
     * @param flags the flags
     * @return their OR
     */
    public static int mask(Set<AccessFlag> flags) {
        int m = 0;
        for (AccessFlag f : flags) {
            m |= f.bit;
        }
        return m;
    }

    /**
     * The verbs' rule, checked before any verb runs: remote write or remote atomic access needs local write.
     *
     * @param flags the requested flags
     * @throws IllegalArgumentException if the combination is invalid
     */
    public static void validate(Set<AccessFlag> flags) {
        if ((flags.contains(REMOTE_WRITE) || flags.contains(REMOTE_ATOMIC)) && !flags.contains(LOCAL_WRITE)) {
            throw new IllegalArgumentException("REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE: " + flags);
        }
    }
}
