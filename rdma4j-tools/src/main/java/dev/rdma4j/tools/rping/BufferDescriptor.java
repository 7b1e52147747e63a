package dev.rdma4j.tools.rping;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.RemoteRegion;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * rping's only message, {@code struct rping_rdma_info}: a buffer's address ({@code u64 buf}), remote key
 * ({@code u32 rkey}) and ping data size ({@code u32 size}), 16 bytes in network byte order, sent with
 * {@code IBV_WR_SEND}. The server's "go ahead" replies are the same 16 bytes, all zero.
 *
 * @param address the buffer's virtual address in the sender's address space
 * @param rkey    its remote key
 * @param size    the sender's ping data size ({@code -S})
 */
record BufferDescriptor(long address, int rkey, int size) {
    /** The message's length on the wire. */
    static final int BYTES = 16;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /**
     * The descriptor the C client sends for one of its buffers ({@code rping_format_send}).
     *
     * @param region the buffer
     * @param size   the ping data size
     * @return the descriptor
     */
    static BufferDescriptor of(MemoryRegion region, int size) {
        return new BufferDescriptor(region.address(), region.rkey(), size);
    }

    /**
     * Writes the 16 bytes at {@code offset}.
     *
     * @param segment the send buffer
     * @param offset  where
     */
    void encode(MemorySegment segment, long offset) {
        segment.set(U64, offset, address);
        segment.set(U32, offset + 8, rkey);
        segment.set(U32, offset + 12, size);
    }

    /**
     * Reads 16 bytes at {@code offset}.
     *
     * @param segment the receive buffer
     * @param offset  where
     * @return the descriptor
     */
    static BufferDescriptor decode(MemorySegment segment, long offset) {
        return new BufferDescriptor(segment.get(U64, offset), segment.get(U32, offset + 8),
                segment.get(U32, offset + 12));
    }

    /**
     * The peer's buffer as RDMA addresses it, {@code length} bytes long. Like the C server, no bound is
     * checked locally: the peer's rkey does that.
     *
     * @param length the bytes an RDMA read or write is about to touch
     * @return the remote region
     */
    RemoteRegion remote(int length) {
        return new RemoteRegion(address, Integer.toUnsignedLong(length), rkey);
    }
}
