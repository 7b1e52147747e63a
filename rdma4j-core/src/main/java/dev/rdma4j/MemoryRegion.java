package dev.rdma4j;

import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.Structs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;

/**
 * Registered memory ({@code struct ibv_mr}, from {@code ibv_reg_mr}): an off-heap segment the device
 * may access with the region's keys. Work requests name sub-ranges as (region, offset, length),
 * bounds-checked in Java.
 *
 * <p>Lifetime: every posted work request that references the region holds it until its completion
 * is polled (or its queue pair is closed); {@link #close()} is refused with an
 * {@link IllegalStateException} meanwhile, so memory the device may still touch is never
 * deregistered or freed.
 */
public final class MemoryRegion extends NativeResource {
    private final ProtectionDomain pd;
    private final MemorySegment segment;
    private final Set<AccessFlag> access;
    private final Arena owned;
    private final MemorySegment handle;
    private final int lkey;
    private final int rkey;

    MemoryRegion(ProtectionDomain pd, MemorySegment segment, Set<AccessFlag> access, Arena owned)
            throws VerbsException {
        super("MemoryRegion(" + segment.byteSize() + " bytes)", checked(pd, segment, access));
        this.pd = pd;
        this.segment = segment;
        this.access = Collections.unmodifiableSet(access);
        this.owned = owned;
        MemorySegment mr;
        try {
            mr = ResourceVerbs.regMr(pd.handle(), segment, AccessFlag.mask(access));
        } catch (VerbsException | RuntimeException e) {
            abandon();
            throw e;
        }
        this.handle = mr;
        this.lkey = ResourceVerbs.u32(mr, Structs.IBV_MR, "lkey");
        this.rkey = ResourceVerbs.u32(mr, Structs.IBV_MR, "rkey");
    }

    private static ProtectionDomain checked(ProtectionDomain pd, MemorySegment segment, Set<AccessFlag> access) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only off-heap (native) segments can be registered: the GC moves "
                    + "heap memory; allocate with an Arena or use ProtectionDomain.allocate");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        AccessFlag.validate(access);
        return pd;
    }

    /**
     * The registered memory. Reading and writing it while the device may access it is the
     * application's affair, as in C.
     *
     * @return the segment
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * The start address ({@code ibv_mr.addr}).
     *
     * @return the virtual address
     */
    public long address() {
        return segment.address();
    }

    /**
     * The length ({@code ibv_mr.length}).
     *
     * @return bytes
     */
    public long length() {
        return segment.byteSize();
    }

    /**
     * The local key ({@code ibv_mr.lkey}) that scatter/gather entries carry.
     *
     * @return the lkey
     */
    public int lkey() {
        return lkey;
    }

    /**
     * The remote key ({@code ibv_mr.rkey}) peers need for RDMA access.
     *
     * @return the rkey
     */
    public int rkey() {
        return rkey;
    }

    /**
     * The access rights the region was registered with.
     *
     * @return an unmodifiable set
     */
    public Set<AccessFlag> access() {
        return access;
    }

    /**
     * The protection domain of the region.
     *
     * @return the domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The whole region as a peer addresses it.
     *
     * @return address, length and rkey
     */
    public RemoteRegion remote() {
        return new RemoteRegion(address(), length(), rkey);
    }

    /**
     * A sub-range as a peer addresses it.
     *
     * @param offset from the start, bytes
     * @param size   bytes
     * @return address, length and rkey of the sub-range
     * @throws IndexOutOfBoundsException if it does not fit
     */
    public RemoteRegion remote(long offset, long size) {
        return remote().slice(offset, size);
    }

    /** Bounds check for a work request's (offset, length); hot path, no allocation when valid. */
    void checkRange(long offset, long size) {
        Objects.checkFromIndexSize(offset, size, segment.byteSize());
    }

    /** A posted work request starts using the region. */
    void pin() {
        acquire(true);
    }

    /** A posted work request finished with the region. */
    void unpin() {
        release(true);
    }

    @Override
    void destroy() {
        try {
            ResourceVerbs.deregMr(handle);
        } catch (VerbsException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } finally {
            if (owned != null) {
                owned.close();
            }
        }
    }
}
