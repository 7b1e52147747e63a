package dev.rdma4j;

import dev.rdma4j.internal.ffi.ResourceVerbs;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}, from {@code ibv_alloc_pd}): groups the memory regions,
 * queue pairs, address handles and shared receive queues that may be used together. Closing is
 * refused while any of them is open.
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
        } catch (VerbsException | RuntimeException e) {
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
     * Registers off-heap memory the caller owns ({@code ibv_reg_mr}). The caller must keep the segment
     * alive until the region is closed; the region's {@code close()} is refused while posted work
     * requests still use it.
     *
     * @param segment a native segment (heap segments are rejected: the GC moves them)
     * @param access  the access rights
     * @return the region
     * @throws IllegalArgumentException for a heap segment, an empty segment or an invalid access set
     * @throws VerbsException if the verb fails (e.g. {@code ENOMEM} over the memlock limit)
     */
    public MemoryRegion register(MemorySegment segment, Set<AccessFlag> access) throws VerbsException {
        return new MemoryRegion(this, segment, EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(AccessFlag.class)
                : access), null);
    }

    /**
     * Registers memory with the given rights ({@code ibv_reg_mr}); see {@link #register(MemorySegment, Set)}.
     *
     * @param segment a native segment
     * @param access  the access rights
     * @return the region
     * @throws VerbsException if the verb fails
     */
    public MemoryRegion register(MemorySegment segment, AccessFlag... access) throws VerbsException {
        return register(segment, access.length == 0 ? EnumSet.noneOf(AccessFlag.class) : EnumSet.of(access[0], access));
    }

    /**
     * Allocates a zeroed, page-aligned buffer and registers it in one call ({@code ibv_reg_mr}). The
     * region owns the memory and frees it on {@code close()}, which is refused while posted work
     * requests still use it: the device can never write freed memory.
     *
     * @param size   bytes, at least 1
     * @param access the access rights
     * @return the region
     * @throws VerbsException if the verb fails
     */
    public MemoryRegion allocate(long size, AccessFlag... access) throws VerbsException {
        if (size < 1) {
            throw new IllegalArgumentException("region size must be at least 1 byte: " + size);
        }
        Set<AccessFlag> flags = access.length == 0 ? EnumSet.noneOf(AccessFlag.class) : EnumSet.of(access[0], access);
        AccessFlag.validate(flags);
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
        try {
            return new MemoryRegion(this, arena.allocate(size, 4096), EnumSet.copyOf(flags.isEmpty()
                    ? EnumSet.noneOf(AccessFlag.class) : flags), arena);
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
        } catch (VerbsException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
