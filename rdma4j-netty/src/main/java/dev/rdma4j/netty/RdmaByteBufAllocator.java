package dev.rdma4j.netty;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.VerbsException;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link ByteBufAllocator} whose direct buffers of 4 KiB to 1 MiB are blocks of registered memory regions
 * ({@code ibv_reg_mr} of 4 MiB chunks, one size class per chunk, powers of two): an {@link RdmaChannel} sends such a
 * buffer, or any slice of it, straight from its memory (the device reads it; no copy into a send buffer). Smaller,
 * larger and heap buffers come from the fallback allocator (small writes are packed and copied anyway).
 * Enabled per channel with {@link RdmaChannelOption#REGISTERED_ALLOCATOR}, which makes it the channel's
 * {@code alloc()}: codecs that allocate through {@code ctx.alloc()} (HTTP/2, gRPC, ...) then write without a copy.
 *
 * <p>One allocator per event loop and device (the memory must be registered in the protection domain of the queue
 * pair that sends it); a buffer written to a channel of another loop or device is copied as any other. The pool
 * grows to the most ever in use and keeps its chunks until the loop shuts down. A buffer that grows beyond its
 * block moves to ordinary memory (and gives its block back).
 *
 * <p>Threading: thread-safe; buffers may be allocated and released on any thread.
 */
public final class RdmaByteBufAllocator extends AbstractByteBufAllocator {
    static final int MIN_BLOCK = 4096;
    static final int MAX_BLOCK = 1 << 20;
    private static final int CHUNK = 4 << 20;

    private final RegisteredMemory memory;
    private final ByteBufAllocator fallback;
    private final SizeClass[] classes;
    private final List<Chunk> chunks = new ArrayList<>();
    private volatile boolean closed;

    RdmaByteBufAllocator(RegisteredMemory memory, ByteBufAllocator fallback) {
        super(true);
        this.memory = memory;
        this.fallback = fallback;
        int n = Integer.numberOfTrailingZeros(MAX_BLOCK) - Integer.numberOfTrailingZeros(MIN_BLOCK) + 1;
        this.classes = new SizeClass[n];
        for (int i = 0; i < n; i++) {
            classes[i] = new SizeClass(MIN_BLOCK << i);
        }
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return fallback.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        if (initialCapacity < MIN_BLOCK || initialCapacity > MAX_BLOCK || closed) {
            return fallback.directBuffer(initialCapacity, maxCapacity);
        }
        SizeClass c = classes[32 - Integer.numberOfLeadingZeros(initialCapacity - 1) - 12];
        Block b = c.take();
        if (b == null) { // no memory could be registered: an ordinary buffer still works, with a copy
            return fallback.directBuffer(initialCapacity, maxCapacity);
        }
        return new RegisteredByteBuf(this, b, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return true;
    }

    void close() {
        closed = true;
        synchronized (chunks) {
            for (Chunk c : chunks) {
                c.closeIfUnused();
            }
        }
    }

    /** A 4 MiB registered region cut into blocks of one size. */
    private final class Chunk {
        final MemoryRegion region;
        final AtomicInteger used = new AtomicInteger();

        Chunk(MemoryRegion region) {
            this.region = region;
        }

        void closeIfUnused() {
            if (used.get() == 0 && !region.isClosed()) {
                memory.remove(region);
                region.close();
            }
        }
    }

    /** A block: its chunk and where it starts. */
    private record Block(Chunk chunk, SizeClass sizeClass, int offset) {
        ByteBuffer buffer(int limit) {
            return chunk.region.segment().asSlice(offset, sizeClass.size).asByteBuffer().limit(limit);
        }

        void free() {
            chunk.used.decrementAndGet();
            if (closed()) {
                chunk.closeIfUnused();
            } else {
                sizeClass.free.add(this);
            }
        }

        private boolean closed() {
            return sizeClass.owner().closed;
        }
    }

    /** The free blocks of one size. */
    private final class SizeClass {
        final int size;
        final ConcurrentLinkedQueue<Block> free = new ConcurrentLinkedQueue<>();

        SizeClass(int size) {
            this.size = size;
        }

        RdmaByteBufAllocator owner() {
            return RdmaByteBufAllocator.this;
        }

        Block take() {
            Block b = free.poll();
            if (b == null) {
                b = grow();
            }
            if (b != null) {
                b.chunk.used.incrementAndGet();
            }
            return b;
        }

        private Block grow() {
            synchronized (this) {
                Block b = free.poll(); // another thread grew it meanwhile
                if (b != null) {
                    return b;
                }
                MemoryRegion r;
                try {
                    r = memory.protectionDomain().allocate(CHUNK, AccessFlag.LOCAL_WRITE);
                } catch (VerbsException | RuntimeException e) {
                    return null;
                }
                Chunk c = new Chunk(r);
                synchronized (chunks) {
                    chunks.add(c);
                }
                memory.add(r);
                for (int off = size; off < CHUNK; off += size) {
                    free.add(new Block(c, this, off));
                }
                return new Block(c, this, 0);
            }
        }
    }

    /** A direct buffer over a registered block; its block goes back to the pool when released or outgrown. */
    private static final class RegisteredByteBuf extends UnpooledDirectByteBuf {
        private Block block;

        RegisteredByteBuf(RdmaByteBufAllocator alloc, Block block, int maxCapacity) {
            super(alloc, block.buffer(Math.min(block.sizeClass.size, maxCapacity)), maxCapacity);
            this.block = block;
            clear(); // a new buffer: nothing readable
        }

        @Override
        public ByteBuf capacity(int newCapacity) {
            int old = capacity();
            super.capacity(newCapacity); // any change moves the bytes to ordinary memory
            if (newCapacity != old) {
                giveBack();
            }
            return this;
        }

        @Override
        protected void deallocate() {
            super.deallocate(); // frees ordinary memory it moved to; never the block
            giveBack();
        }

        private void giveBack() {
            Block b = block;
            if (b != null) {
                block = null;
                b.free();
            }
        }
    }
}
