package dev.rdma4j.bench;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.WorkCompletions;
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

/**
 * rdma4j's wr_id book-keeping of one request, without the provider: what {@code QueuePair.tryPost} does per
 * request (claim a ring slot, encode rdma4j's wr_id, pin the region, publish) and what
 * {@code CompletionQueue.poll} does per completion (find the owner by the wr_id's token, retire the slot,
 * unpin, hand back the caller's wr_id). {@code workRing}: a queue pair's in-order ring; {@code slotTable}: a
 * shared receive queue's any-order table. The classes are package-private: the benchmark calls the core's own
 * methods through {@link Internals}' constant method handles, which the JIT inlines, and the owner it registers
 * (a class {@code Internals} defines in the core's package, since {@code WorkRequestIds.Owner} is package-private)
 * is found by the core's {@code WorkRequestIds.owner} and called through {@code invokeinterface}, as the poller
 * calls a queue pair's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RingHostBench {
    private Arena arena;
    private MemoryRegion region;
    /** A {@code WorkRing}. */
    private Object ring;
    /** A {@code SlotTable}. */
    private Object table;
    private int ringToken;
    private int tableToken;
    private WorkCompletions wcs;
    private long next;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        region = Internals.unregisteredRegion(arena.allocate(1 << 16, 4096), 1, 2);
        ring = Internals.newWorkRing(256, 2);
        table = Internals.newSlotTable(256, 1);
        wcs = new WorkCompletions(1);
        Internals.count(wcs, 1);
        ringToken = Internals.register(ring, table, false);
        tableToken = Internals.register(ring, table, true);
    }

    @TearDown
    public void tearDown() {
        Internals.unregister(ringToken);
        Internals.unregister(tableToken);
        wcs.close();
        region.close();
        arena.close();
    }

    /** {@code srq}: {@code slots} is the {@code SlotTable}, else the {@code WorkRing} (a constant per benchmark). */
    private static long roundTrip(Object slots, boolean srq, int token, boolean recv, MemoryRegion region,
            long userWrId, WorkCompletions wcs) {
        long seq = srq ? Internals.tableClaim(slots, userWrId, region, 0)
                : Internals.ringClaim(slots, userWrId, region, 0);
        long wrId = Internals.encode(token, recv, seq);
        if (srq) {
            Internals.tablePin(slots, seq, region);
        } else {
            Internals.ringPin(slots, seq, region);
        }
        Internals.publish();
        // ... the device completes it; the poller translates:
        Object owner = Internals.owner(wrId);
        return Internals.complete(owner, Internals.isRecv(wrId), Internals.seq(wrId), wcs, 0);
    }

    /** Post and completion accounting of one send on a queue pair's ring. */
    @Benchmark
    public long workRing() {
        return roundTrip(ring, false, ringToken, false, region, next++, wcs);
    }

    /** Post and completion accounting of one receive on a shared receive queue's slot table. */
    @Benchmark
    public long slotTable() {
        return roundTrip(table, true, tableToken, true, region, next++, wcs);
    }
}
