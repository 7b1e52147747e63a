package dev.rdma4j;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Pinning one region from 1, 2 and 4 threads, each with a queue of its own (as queue pairs posting from their
 * own threads): per operation one request is claimed on the thread's {@link WorkRing} and pins the shared
 * region, and the oldest of {@value #WINDOW} outstanding requests completes and unpins it. A pin that costs a
 * contended atomic on the region shows as time growing with the threads. Package-private classes, hence this
 * package (class path only).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PinHostBench {
    static final int WINDOW = 16;

    /** The region every thread pins. */
    @State(Scope.Benchmark)
    public static class Shared {
        Arena arena;
        MemoryRegion region;

        @Setup
        public void setUp() {
            arena = Arena.ofShared();
            region = MemoryRegion.unregistered(arena.allocate(1 << 16, 4096), 1, 2);
        }

        @TearDown
        public void tearDown() {
            region.close(); // refused if a pin leaked
            arena.close();
        }
    }

    /** One thread's queue. */
    @State(Scope.Thread)
    public static class Queue {
        WorkRing ring;
        long tail;

        @Setup
        public void setUp() {
            ring = new WorkRing(WINDOW * 2, 1);
        }

        @TearDown
        public void tearDown() {
            ring.releaseAll();
        }
    }

    private static long step(Shared s, Queue q) {
        WorkRing ring = q.ring;
        long seq = ring.claim(seq(q), null, 0);
        ring.pin(seq, s.region);
        WorkRing.publish();
        if (ring.outstanding() >= WINDOW) {
            ring.complete(q.tail++ & WorkRequestIds.SEQ_MASK, null, 0);
        }
        return seq;
    }

    private static long seq(Queue q) {
        return q.ring.head();
    }

    @Benchmark
    @Threads(1)
    public long threads1(Shared s, Queue q) {
        return step(s, q);
    }

    @Benchmark
    @Threads(2)
    public long threads2(Shared s, Queue q) {
        return step(s, q);
    }

    @Benchmark
    @Threads(4)
    public long threads4(Shared s, Queue q) {
        return step(s, q);
    }
}
