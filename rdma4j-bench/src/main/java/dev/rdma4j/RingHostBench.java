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

/**
 * rdma4j's wr_id book-keeping of one request, without the provider: what {@code QueuePair.tryPost} does per
 * request (claim a ring slot, encode rdma4j's wr_id, pin the region, publish) and what
 * {@code CompletionQueue.poll} does per completion (find the owner by the wr_id's token, retire the slot,
 * unpin, hand back the caller's wr_id). {@code workRing}: a queue pair's in-order ring; {@code slotTable}: a
 * shared receive queue's any-order table. Package-private classes, hence this package (class path only).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RingHostBench {
    private Arena arena;
    private MemoryRegion region;
    private WorkRing ring;
    private SlotTable table;
    private int ringToken;
    private int tableToken;
    private WorkCompletions wcs;
    private long next;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        region = MemoryRegion.unregistered(arena.allocate(1 << 16, 4096), 1, 2);
        ring = new WorkRing(256, 2);
        table = new SlotTable(256, 1);
        wcs = new WorkCompletions(1);
        wcs.count(1);
        ringToken = WorkRequestIds.register(t -> owner(t, false));
        tableToken = WorkRequestIds.register(t -> owner(t, true));
    }

    private WorkRequestIds.Owner owner(int token, boolean srq) {
        return new WorkRequestIds.Owner() {
            @Override
            public long complete(boolean recv, long seq, WorkCompletions w, int i) {
                return srq ? table.complete(seq, w, i) : ring.complete(seq, recv ? w : null, i);
            }

            @Override
            public int token() {
                return token;
            }

            @Override
            public dev.rdma4j.internal.QpDriver driver() {
                return null;
            }
        };
    }

    @TearDown
    public void tearDown() {
        WorkRequestIds.unregister(ringToken);
        WorkRequestIds.unregister(tableToken);
        wcs.close();
        region.close();
        arena.close();
    }

    private static long roundTrip(Slots slots, int token, boolean recv, MemoryRegion region, long userWrId,
            WorkCompletions wcs) {
        long seq = slots.claim(userWrId, region, 0);
        long wrId = WorkRequestIds.encode(token, recv, seq);
        slots.pin(seq, region);
        WorkRing.publish();
        // ... the device completes it; the poller translates:
        WorkRequestIds.Owner owner = WorkRequestIds.owner(wrId);
        return owner.complete(WorkRequestIds.isRecv(wrId), WorkRequestIds.seq(wrId), wcs, 0);
    }

    /** Post and completion accounting of one send on a queue pair's ring. */
    @Benchmark
    public long workRing() {
        return roundTrip(ring, ringToken, false, region, next++, wcs);
    }

    /** Post and completion accounting of one receive on a shared receive queue's slot table. */
    @Benchmark
    public long slotTable() {
        return roundTrip(table, tableToken, true, region, next++, wcs);
    }
}
