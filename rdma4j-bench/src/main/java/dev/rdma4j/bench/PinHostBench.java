package dev.rdma4j.bench;

import dev.rdma4j.MemoryRegion;
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
 * own threads): per operation one request is claimed on the thread's {@code WorkRing} and pins the shared
 * region, and the oldest of {@value #WINDOW} outstanding requests completes and unpins it. A pin that costs a
 * contended atomic on the region shows as time growing with the threads. {@code WorkRing} is package-private: the
 * benchmark calls the core's own methods through {@link Internals}' constant method handles, which the JIT inlines.
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
            region = Internals.unregisteredRegion(arena.allocate(1 << 16, 4096), 1, 2);
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
        /** A {@code WorkRing}. */
        Object ring;
        long tail;

        @Setup
        public void setUp() {
            ring = Internals.newWorkRing(WINDOW * 2, 1);
        }

        @TearDown
        public void tearDown() {
            Internals.releaseAll(ring);
        }
    }

    private static long step(Shared s, Queue q) {
        Object ring = q.ring;
        long seq = Internals.ringClaim(ring, seq(q), null, 0);
        Internals.ringPin(ring, seq, s.region);
        Internals.publish();
        if (Internals.outstanding(ring) >= WINDOW) {
            Internals.ringComplete(ring, q.tail++ & Internals.SEQ_MASK, null, 0);
        }
        return seq;
    }

    private static long seq(Queue q) {
        return Internals.head(q.ring);
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
