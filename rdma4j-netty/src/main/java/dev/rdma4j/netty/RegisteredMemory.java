package dev.rdma4j.netty;

import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.VerbsException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The registered memory of one event loop on one device: the protection domain its channels share, and every region
 * in it that a send may name, found by address (the allocator's chunks and the channels' receive buffers), so that a
 * {@link ByteBuf} whose memory lies in one leaves without a copy, whatever slice or duplicate of it is written.
 *
 * <p>Threading: thread-safe. Regions are added and removed by the loop and by the allocator on any thread.
 */
final class RegisteredMemory {
    private final ProtectionDomain pd;
    private final ConcurrentSkipListMap<Long, MemoryRegion> regions = new ConcurrentSkipListMap<>();
    private final RdmaByteBufAllocator allocator;

    RegisteredMemory(Context context, ByteBufAllocator fallback) throws VerbsException {
        this.pd = context.allocateProtectionDomain();
        this.allocator = new RdmaByteBufAllocator(this, fallback);
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    RdmaByteBufAllocator allocator() {
        return allocator;
    }

    void add(MemoryRegion r) {
        regions.put(r.address(), r);
    }

    void remove(MemoryRegion r) {
        regions.remove(r.address(), r);
    }

    /**
     * The region that holds {@code length} bytes of {@code buf} from {@code index}, with the offset of the first, or
     * null when they are not in one region of this memory (heap, other memory, several pieces).
     *
     * @return {@code [region, offset]} as a {@link Located}, or null
     */
    Located locate(ByteBuf buf, int index, int length) {
        if (!buf.isDirect() || buf.nioBufferCount() != 1) {
            return null;
        }
        ByteBuffer nio = buf.nioBuffer(index, length);
        long address = MemorySegment.ofBuffer(nio).address();
        Map.Entry<Long, MemoryRegion> e = regions.floorEntry(address);
        if (e == null) {
            return null;
        }
        MemoryRegion r = e.getValue();
        long offset = address - r.address();
        return offset + length <= r.length() ? new Located(r, offset) : null;
    }

    /** Where a buffer's bytes are: a region and an offset in it. */
    record Located(MemoryRegion region, long offset) {
    }

    /** The loop shuts down: the allocator's free chunks now, the rest and the PD as their last users go. */
    void close() {
        allocator.close();
        pd.closeWhenIdle();
    }
}
