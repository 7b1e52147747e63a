package dev.rdma4j;

import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}, from {@code ibv_alloc_pd}): groups the memory regions,
 * queue pairs, address handles and shared receive queues that may be used together. Closing is
 * refused while any of them is open.
 *
 * <p>Memory is registered safely by default: {@link #allocate} gives a region that owns its memory,
 * {@link #register(MemorySegment, Set)} takes only memory that cannot be freed while the region keeps
 * it, and only {@link #registerUnsafe(MemorySegment, Set)} trusts the caller to keep memory allocated.
 *
 * <p>Thread-safe: any thread may create objects in a domain, concurrently with each other and with
 * {@link #close()}.
 */
public final class ProtectionDomain extends NativeResource {
    private final Context context;
    private final MemorySegment handle;

    ProtectionDomain(Context context) throws VerbsException {
        super("ProtectionDomain(" + context.device().name() + ")", context);
        this.context = context;
        MemorySegment pd;
        try {
            pd = ResourceVerbs.allocPd(context.handle());
        } catch (NativeException e) {
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
        this.handle = pd;
    }

    /**
     * The context this domain belongs to.
     *
     * @return the context
     */
    public Context context() {
        return context;
    }

    /**
     * Registers memory whose lifetime rdma4j can guarantee ({@code ibv_reg_mr}): a native segment whose
     * memory stays allocated for as long as the segment is reachable, i.e. one of
     * {@link java.lang.foreign.Arena#ofAuto()}, of {@link java.lang.foreign.Arena#global()}, of a direct
     * {@link java.nio.ByteBuffer} ({@link MemorySegment#ofBuffer}), or one a restricted method such as
     * {@link MemorySegment#reinterpret(long)} gave the global scope (that method's caller vouches for the
     * memory). The region keeps the segment reachable until it is closed (even if the region itself is
     * leaked), so the device can never access freed memory.
     *
     * <p>Segments of an arena that can be closed ({@link java.lang.foreign.Arena#ofConfined()},
     * {@link java.lang.foreign.Arena#ofShared()}) are refused: Java offers no way to hold a caller's arena
     * open, and memory freed while registered is written by the device after the JVM has reused it (a
     * crash). For such memory use {@link #allocate} (the region owns its memory; slice
     * {@link MemoryRegion#segment()} for buffers), or {@link #registerUnsafe(MemorySegment, Set)}.
     *
     * @param segment a native segment whose memory lives as long as the segment is reachable
     * @param access  the access rights
     * @return the region
     * @throws IllegalArgumentException for a heap segment, an empty segment, a segment of an arena that
     *                                  can be closed, or an invalid access set
     * @throws IllegalStateException    if this domain is closed
     * @throws VerbsException           if the verb fails (e.g. {@code ENOMEM} over the memlock limit)
     */
    public MemoryRegion register(MemorySegment segment, Set<AccessFlag> access) throws VerbsException {
        return new MemoryRegion(this, segment, copy(access), null, false);
    }

    /**
     * Registers memory whose lifetime rdma4j can guarantee, with the given rights ({@code ibv_reg_mr});
     * see {@link #register(MemorySegment, Set)}.
     *
     * @param segment a native segment whose memory lives as long as the segment is reachable
     * @param access  the access rights
     * @return the region
     * @throws IllegalArgumentException for a heap segment, an empty segment, a segment of an arena that
     *                                  can be closed, or an invalid access set
     * @throws VerbsException           if the verb fails
     */
    public MemoryRegion register(MemorySegment segment, AccessFlag... access) throws VerbsException {
        return register(segment, flags(access));
    }

    /**
     * <b>Unsafe:</b> registers native memory whose lifetime rdma4j cannot check ({@code ibv_reg_mr}),
     * e.g. a segment of the caller's {@link java.lang.foreign.Arena#ofShared()} or
     * {@link java.lang.foreign.Arena#ofConfined()} arena, or memory another native library allocated
     * (huge pages, a pool, device memory). <b>The caller must keep the memory allocated until the region
     * is closed</b>, and a region is closed only once no posted work request uses it. If the memory is
     * freed while registered (its arena closed), the device may write it after the JVM or the C heap has
     * reused it: memory corruption and a JVM crash, not an exception. rdma4j can only catch the case
     * where the segment's arena is already closed when a work request names the region (an
     * {@link IllegalStateException}); a close after the post is not detected.
     *
     * <p>Prefer {@link #allocate} or {@link #register(MemorySegment, Set)}, which make this impossible.
     *
     * @param segment a live native segment the caller keeps allocated until the region is closed
     * @param access  the access rights
     * @return the region
     * @throws IllegalArgumentException for a heap segment, an empty segment or an invalid access set
     * @throws IllegalStateException    if the segment's arena is already closed, or this domain is
     * @throws VerbsException           if the verb fails (e.g. {@code ENOMEM} over the memlock limit)
     */
    public MemoryRegion registerUnsafe(MemorySegment segment, Set<AccessFlag> access) throws VerbsException {
        return new MemoryRegion(this, segment, copy(access), null, true);
    }

    /**
     * <b>Unsafe:</b> registers native memory whose lifetime rdma4j cannot check, with the given rights
     * ({@code ibv_reg_mr}); the caller must keep it allocated until the region is closed. See
     * {@link #registerUnsafe(MemorySegment, Set)}.
     *
     * @param segment a live native segment the caller keeps allocated until the region is closed
     * @param access  the access rights
     * @return the region
     * @throws IllegalArgumentException for a heap segment, an empty segment or an invalid access set
     * @throws IllegalStateException    if the segment's arena is already closed
     * @throws VerbsException           if the verb fails
     */
    public MemoryRegion registerUnsafe(MemorySegment segment, AccessFlag... access) throws VerbsException {
        return registerUnsafe(segment, flags(access));
    }

    private static Set<AccessFlag> copy(Set<AccessFlag> access) {
        return access.isEmpty() ? EnumSet.noneOf(AccessFlag.class) : EnumSet.copyOf(access);
    }

    private static Set<AccessFlag> flags(AccessFlag... access) {
        return access.length == 0 ? EnumSet.noneOf(AccessFlag.class) : EnumSet.of(access[0], access);
    }

    /**
     * Allocates a zeroed, page-aligned buffer and registers it in one call ({@code ibv_reg_mr}). The
     * region owns the memory and frees it on {@code close()}, which is refused while posted work
     * requests still use it: the device can never write freed memory.
     *
     * @param size   bytes, at least 1
     * @param access the access rights
     * @return the region
     * @throws VerbsException if the verb fails, or the memory cannot be allocated (verb {@code malloc},
     *                        {@code ENOMEM}: the JDK's {@code OutOfMemoryError} for native memory, e.g. a size no
     *                        process could have, turned into the verbs' failure it is)
     */
    public MemoryRegion allocate(long size, AccessFlag... access) throws VerbsException {
        if (size < 1) {
            throw new IllegalArgumentException("region size must be at least 1 byte: " + size);
        }
        Set<AccessFlag> flags = flags(access);
        AccessFlag.validate(flags);
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
        java.lang.foreign.MemorySegment memory;
        try {
            memory = arena.allocate(size, 4096);
        } catch (OutOfMemoryError e) {
            arena.close();
            throw VerbsException.of("malloc", dev.rdma4j.internal.ffi.Libc.ENOMEM,
                    size + " bytes for a region (" + e.getMessage() + ")");
        }
        try {
            return new MemoryRegion(this, memory, flags, arena, false);
        } catch (VerbsException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Creates an address handle for UD sends ({@code ibv_create_ah}).
     *
     * @param attributes the path to the destination
     * @return the handle
     * @throws VerbsException if the verb fails
     */
    public AddressHandle createAddressHandle(AddressHandle.Attributes attributes) throws VerbsException {
        return new AddressHandle(this, attributes);
    }

    /**
     * Creates the address handle that answers a UD receive ({@code ibv_create_ah_from_wc}: {@code ibv_init_ah_from_wc},
     * then {@code ibv_create_ah}), as a UD server does for a client it learns of only by its first message (rdma-core's
     * {@code udaddy}). The sender's queue pair number is the completion's {@link WorkCompletion#sourceQp()}.
     *
     * @param received a successful receive completion of a UD queue pair
     * @param grh      the first 40 bytes of the receive's buffer, where the device wrote the GRH (on RoCE v2 over
     *                 IPv4, the IP header from byte 20)
     * @param port     the local port the receive came in on
     * @return the handle, whose {@link AddressHandle#attributes()} are the reply's address vector
     * @throws VerbsException           if {@code ibv_init_ah_from_wc} (no local GID matches the destination the packet
     *                                  was sent to, e.g. a multicast group's) or {@code ibv_create_ah} fails
     * @throws IllegalArgumentException if the completion is not a successful receive or {@code grh} is shorter than
     *                                  40 bytes
     */
    public AddressHandle createAddressHandle(WorkCompletion received, java.lang.foreign.MemorySegment grh, int port)
            throws VerbsException {
        if (!received.isReceive() || !received.isSuccess()) {
            throw new IllegalArgumentException("an address handle answers a successful receive: " + received.status()
                    + " " + received.opcode());
        }
        if (grh.byteSize() < 40) {
            throw new IllegalArgumentException("the GRH is 40 bytes: " + grh.byteSize());
        }
        Ranges.check("port", port, 1, 255);
        AddressHandle.Attributes a;
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment g = arena.allocate(40, 8).copyFrom(grh.asSlice(0, 40));
            java.lang.foreign.MemorySegment wc = dev.rdma4j.internal.ffi.AhSrqCqAttrs.wcForAh(arena, received.flags(),
                    received.slid(), received.serviceLevel(), received.sourceQp());
            java.lang.foreign.MemorySegment attr = dev.rdma4j.internal.ffi.AhSrqCqAttrs.ahAttr(arena);
            acquire(false); // the PD (and so its context) stays open during the call
            try {
                dev.rdma4j.internal.ffi.ResourceVerbs.initAhFromWc(context.handle(), port, wc, g, attr);
            } catch (dev.rdma4j.internal.ffi.NativeException e) {
                throw VerbsException.from(e);
            } finally {
                release(false);
            }
            a = AddressHandle.Attributes.decode(attr);
        }
        return new AddressHandle(this, a);
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}): a remote key of its own for a sub-range of a region of this
     * protection domain, bound and taken back without touching the region's registration (see {@link MemoryWindow}).
     *
     * @param type {@link MemoryWindow.Type#TYPE_1} (bound with {@code ibv_bind_mw}) or
     *             {@link MemoryWindow.Type#TYPE_2} (bound with a work request)
     * @return the window, unbound
     * @throws VerbsException if the verb fails ({@code EOPNOTSUPP} when the device has no windows of that type;
     *                        {@code devinfo -v} lists {@code MEM_WINDOW} and {@code MEM_WINDOW_TYPE_2A/2B} among the
     *                        device's capabilities when it has them)
     */
    public MemoryWindow allocateWindow(MemoryWindow.Type type) throws VerbsException {
        return new MemoryWindow(this, java.util.Objects.requireNonNull(type, "type"));
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param maxWr  receives it holds (the device may grant more)
     * @param maxSge scatter entries per receive
     * @param limit  the initial limit (0: not armed)
     * @return the SRQ
     * @throws VerbsException if the verb fails (e.g. above {@code max_srq_wr})
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge, int limit) throws VerbsException {
        return new SharedReceiveQueue(this, maxWr, maxSge, limit);
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    void destroy() {
        try {
            ResourceVerbs.deallocPd(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        }
    }
}
