package dev.rdma4j;

import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registered memory ({@code struct ibv_mr}, from {@code ibv_reg_mr}): an off-heap segment the device
 * may access with the region's keys. Work requests name sub-ranges as (region, offset, length),
 * bounds-checked in Java.
 *
 * <p>Lifetime: every posted work request that references the region holds it until its completion
 * is polled (or its queue pair is closed); {@link #close()} is refused with an
 * {@link IllegalStateException} meanwhile, so memory the device may still touch is never
 * deregistered or freed. The memory itself outlives the registration: a region from
 * {@link ProtectionDomain#allocate} owns it and frees it on close; one from
 * {@link ProtectionDomain#register(MemorySegment, Set)} keeps its segment (whose memory the GC frees only
 * once it is unreachable) reachable until it is closed; one from
 * {@link ProtectionDomain#registerUnsafe(MemorySegment, Set)} relies on its caller.
 *
 * <p>Thread-safe: the keys and bounds never change, and any thread may name the region in work
 * requests or close it. Reading and writing its memory while the device may access it is the
 * application's affair, as in C.
 */
public final class MemoryRegion extends NativeResource {
    /**
     * Segments of live registrations: a region that is leaked without {@code close()} stays registered,
     * so its memory must stay allocated too (an automatic arena frees it once the segment is unreachable).
     */
    private static final Set<Keep> REGISTERED = ConcurrentHashMap.newKeySet();

    /** Holds a registered segment; identity equality, so one registration is one entry. */
    private static final class Keep {
        @SuppressWarnings("unused")
        final MemorySegment segment;

        Keep(MemorySegment segment) {
            this.segment = segment;
        }
    }

    private final ProtectionDomain pd;
    private final MemorySegment segment;
    private final Set<AccessFlag> access;
    private final Arena owned;
    private final Keep keep;
    private final MemorySegment handle;
    private final int lkey;
    private final int rkey;

    /**
     * Registers {@code segment}: owned by the region if {@code owned} is its arena, else its memory must
     * live as long as it is reachable, unless {@code unsafe} (the caller keeps it allocated).
     */
    MemoryRegion(ProtectionDomain pd, MemorySegment segment, Set<AccessFlag> access, Arena owned, boolean unsafe)
            throws VerbsException {
        super("MemoryRegion(" + checked(segment, access, owned != null || unsafe).byteSize() + " bytes"
                + (unsafe ? ", registerUnsafe" : "") + ")", pd, true);
        this.pd = pd;
        this.segment = segment;
        this.access = Collections.unmodifiableSet(access);
        this.owned = owned;
        this.keep = owned == null && !unsafe ? new Keep(segment) : null;
        MemorySegment mr;
        try {
            mr = ResourceVerbs.regMr(pd.handle(), segment, AccessFlag.mask(access));
        } catch (NativeException e) {
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
        if (keep != null) {
            REGISTERED.add(keep);
        }
        this.handle = mr;
        this.lkey = ResourceVerbs.mrLkey(mr);
        this.rkey = ResourceVerbs.mrRkey(mr);
    }

    /**
     * A region that was never registered, for benchmarks of the host-side hot path (rdma4j-bench encodes and
     * pins without a device): the keys are made up, there is no protection domain, and closing it frees
     * nothing. It can never reach a device: posting needs a queue pair, which needs a device. Kept
     * package-private: only code in this package (tests) can make one, and rdma4j-bench's {@code Internals},
     * reflectively, on the class path.
     */
    static MemoryRegion unregistered(MemorySegment segment, int lkey, int rkey) {
        return new MemoryRegion(segment, lkey, rkey);
    }

    private MemoryRegion(MemorySegment segment, int lkey, int rkey) {
        super("MemoryRegion(" + segment.byteSize() + " bytes, unregistered)", null, true);
        this.pd = null;
        this.segment = segment;
        this.access = Set.of();
        this.owned = null;
        this.keep = null;
        this.handle = null;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    private static MemorySegment checked(MemorySegment segment, Set<AccessFlag> access, boolean lifetimeVouched) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only off-heap (native) segments can be registered: the GC moves "
                    + "heap memory; allocate with an Arena or use ProtectionDomain.allocate");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("cannot register a segment whose arena is closed: its memory is freed");
        }
        if (!lifetimeVouched && !livesWhileReachable(segment)) {
            throw new IllegalArgumentException("cannot register this segment: its arena can be closed while the "
                    + "device uses it (a segment of Arena.ofConfined() or Arena.ofShared()), and Java offers no way "
                    + "to hold a caller's arena open; the device would write freed memory the JVM reuses. Use "
                    + "ProtectionDomain.allocate (the region owns its memory), a segment of Arena.ofAuto(), "
                    + "Arena.global() or a direct ByteBuffer (the region keeps it allocated), or registerUnsafe "
                    + "and keep the arena open until the region is closed");
        }
        AccessFlag.validate(access);
        if (segment.isReadOnly() && (access.contains(AccessFlag.LOCAL_WRITE) || access.contains(AccessFlag.REMOTE_WRITE)
                || access.contains(AccessFlag.REMOTE_ATOMIC))) {
            throw new IllegalArgumentException("a read-only segment cannot be registered with " + access
                    + ": the device would write memory Java promised nobody writes; register it with REMOTE_READ"
                    + " (or no access) only");
        }
        if (!segment.isAccessibleBy(Thread.currentThread())) {
            throw new IllegalArgumentException("cannot register a segment confined to another thread (an "
                    + "Arena.ofConfined() of that thread): register it from that thread, or use a shared arena");
        }
        return segment;
    }

    /**
     * Whether the segment's memory stays allocated as long as the segment is reachable: the global scope,
     * an automatic arena's ({@code Arena.ofAuto()}) or a direct buffer's. The public FFM API cannot tell
     * an automatic arena's scope from a shared one's, so this names the JDK's scope classes
     * ({@code RegisteredMemoryLifetimeTest} checks them on the JDK the build uses); an unknown class counts
     * as closeable, so a JDK that renames them makes {@code register} refuse more, never accept freeable
     * memory.
     */
    static boolean livesWhileReachable(MemorySegment segment) {
        MemorySegment.Scope scope = segment.scope();
        if (scope.equals(Arena.global().scope())) {
            return true;
        }
        String kind = scope.getClass().getName();
        return kind.equals("jdk.internal.foreign.ImplicitSession") // Arena.ofAuto()
                || kind.equals("jdk.internal.foreign.GlobalSession") // global scope
                || kind.equals("jdk.internal.foreign.GlobalSession$HeapSession"); // direct buffers
    }

    /**
     * The registered memory. Reading and writing it while the device may access it is the
     * application's affair, as in C. For a region from {@link ProtectionDomain#allocate} the segment is
     * closed with the region.
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

    /** What {@link #advise} asks of an on-demand region ({@code enum ibv_advise_mr_advice}). */
    public enum Advice {
        /** {@code IBV_ADVISE_MR_ADVICE_PREFETCH}: fault the pages in for reading. */
        PREFETCH(dev.rdma4j.internal.ffi.CEnums.IBV_ADVISE_MR_ADVICE_PREFETCH),
        /** {@code IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE}: fault the pages in for writing. */
        PREFETCH_WRITE(dev.rdma4j.internal.ffi.CEnums.IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE),
        /** {@code IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT}: map what is present, fault nothing. */
        PREFETCH_NO_FAULT(dev.rdma4j.internal.ffi.CEnums.IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);

        final int code;

        Advice(int code) {
            this.code = code;
        }
    }

    /**
     * Advises the device about a range of this on-demand region ({@code ibv_advise_mr} with one scatter/gather entry):
     * prefetch its pages before requests touch them. Only for regions registered with {@link AccessFlag#ON_DEMAND}
     * on a device that pages on demand ({@link ExtendedDeviceAttributes.OnDemandPaging#supported()}).
     *
     * @param advice what to prefetch
     * @param offset where the range starts
     * @param length bytes
     * @param flush  {@code IBV_ADVISE_MR_FLAG_FLUSH}: return once the pages are mapped, not at once
     * @throws VerbsException           {@code EOPNOTSUPP} when the provider has no {@code advise_mr} (rxe), else the
     *                                  verb's errno
     * @throws IllegalArgumentException if the range does not fit the region
     * @throws IllegalStateException    if the region is closed, or unregistered
     */
    public void advise(Advice advice, long offset, int length, boolean flush) throws VerbsException {
        checkRange(offset, length);
        if (handle == null) {
            throw new IllegalStateException(this + " is not registered: nothing to advise");
        }
        acquire(false);
        try {
            int rc = dev.rdma4j.internal.ffi.DeviceVerbs.adviseMr(pd.handle(), advice.code,
                    flush ? dev.rdma4j.internal.ffi.CEnums.IBV_ADVISE_MR_FLAG_FLUSH : 0, address() + offset, length, lkey);
            if (rc != 0) {
                throw VerbsException.of("ibv_advise_mr", rc, this + ": " + advice + " of " + length + " bytes at "
                        + offset + (rc == dev.rdma4j.internal.ffi.Errno.EOPNOTSUPP
                        ? " (the device does not page on demand)" : ""));
            }
        } finally {
            release(false);
        }
    }

    /** The {@code struct ibv_mr}, or null for an unregistered region. */
    MemorySegment handle() {
        return handle;
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
     * @throws IllegalArgumentException if {@code offset} or {@code size} is negative or the range does not fit
     *                                  the region (the message names the argument and the values)
     */
    public RemoteRegion remote(long offset, long size) {
        Ranges.checkSlice("offset", offset, "size", size, "the region", length());
        return new RemoteRegion(address() + offset, size, rkey);
    }

    /**
     * Bounds check for a work request's (offset, length), and a last check that the memory still exists
     * (a {@code registerUnsafe} caller may have closed its arena); hot path, no allocation when valid.
     */
    void checkRange(long offset, long size) {
        Ranges.checkSlice("offset", offset, "length", size, "the region", segment.byteSize());
        if (!segment.scope().isAlive()) {
            throw freed();
        }
    }

    private IllegalStateException freed() {
        ensureOpen();
        return new IllegalStateException(description() + ": its memory was freed while registered (the arena of "
                + "the registerUnsafe segment was closed); the device must not access it, close the region");
    }

    @Override
    void destroy() {
        if (handle == null) {
            return; // unregistered(): nothing native
        }
        try {
            ResourceVerbs.deregMr(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        } finally {
            if (owned != null) {
                owned.close();
            }
            if (keep != null) {
                REGISTERED.remove(keep);
            }
        }
    }
}
