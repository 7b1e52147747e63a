package dev.rdma4j.netty;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the transport's device tests share: the device's address, and Netty's leak detector at PARANOID with every
 * leak it reports counted (a factory installed before the first buffer class loads).
 */
final class NettyTestSupport {
    private static final AtomicLong LEAKS = new AtomicLong();

    static {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        ResourceLeakDetectorFactory defaults = ResourceLeakDetectorFactory.instance();
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                    long maxActive) {
                ResourceLeakDetector<T> d = defaults.newResourceLeakDetector(resource, samplingInterval, maxActive);
                d.setLeakListener((type, records) -> LEAKS.incrementAndGet());
                return d;
            }
        });
    }

    private NettyTestSupport() {
    }

    /** Makes sure the leak factory is in place (call from each test class's static initialiser). */
    static void init() {
    }

    /** rxe0's IPv4 address and a random port. */
    static InetSocketAddress address() throws Exception {
        InetAddress ip;
        try (Context ctx = Device.byNameOrDefault(null).open()) {
            ip = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID on the device"));
        }
        return new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    /**
     * Leaks Netty reported so far, after collecting garbage and allocating (the detector reports a leak when it
     * tracks a new buffer after the leaked one was collected).
     */
    static long leaksAfterGc() {
        for (int i = 0; i < 10; i++) {
            System.gc(); // the collector enqueues leaked buffers' references; the next tracks report them
            for (int j = 0; j < 100; j++) {
                ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(16);
                b.release();
            }
        }
        return LEAKS.get();
    }
}
