package dev.rdma4j.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.nio.ByteBuffer;

/**
 * A received message in an {@link RdmaPipe}'s registered receive buffer, lent to the application: released
 * (reference count 0), the buffer is posted again. Tracked by Netty's leak detector.
 *
 * <p>Threading: as any {@link ByteBuf}; released on any thread (the pipe hops to its loop).
 */
final class ReceivedBuf extends UnpooledDirectByteBuf {
    private static final ResourceLeakDetector<ByteBuf> LEAKS =
            ResourceLeakDetectorFactory.instance().newResourceLeakDetector(ByteBuf.class);

    private final RdmaPipe pipe;
    private final int slot;
    private final ResourceLeakTracker<ByteBuf> leak;

    ReceivedBuf(ByteBufAllocator alloc, RdmaPipe pipe, int slot, ByteBuffer data) {
        super(alloc, data, data.remaining());
        this.pipe = pipe;
        this.slot = slot;
        this.leak = LEAKS.track(this);
    }

    @Override
    protected void deallocate() {
        super.deallocate(); // the memory is the receive region's: nothing freed
        if (leak != null) {
            leak.close(this);
        }
        pipe.returned(slot);
    }
}
