package dev.rdma4j.bench;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code CompletionQueue.poll} through {@code context->ops.poll_cq}: of an empty CQ ({@code empty}), and of a
 * CQ holding {@value #FILL} completions, {@value #BATCH} per poll ({@code full16}: the provider's copy and
 * rdma4j's translation of each, back to the caller's wr_id with its region unpinned). The full CQ is refilled
 * outside the measurement (a per-invocation set-up that posts only when it is empty).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PollDeviceBench {
    static final int FILL = 1024;
    static final int BATCH = 16;

    private LoopbackPair lb;
    private CompletionQueue idle;
    private SendBatch writes;
    private WorkCompletions wcs;
    private RemoteRegion remote;
    private MemorySegment memory;
    private int left;
    private long epoch;

    @Setup(Level.Trial)
    public void setUp() throws VerbsException {
        lb = new LoopbackPair(FILL, null);
        idle = lb.ctx.createCompletionQueue(16);
        writes = new SendBatch(BATCH, 1);
        wcs = new WorkCompletions(BATCH);
        remote = lb.mr.remote();
        memory = lb.mr.segment();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws VerbsException {
        LoopbackPair.await(lb.cqA, wcs, left); // nothing outstanding: the QP closes without pins
        idle.close();
        writes.close();
        wcs.close();
        lb.close();
    }

    /**
     * When the CQ is empty: {@value #FILL} signaled RDMA writes, each of 8 bytes carrying its own value to one
     * remote word; RC executes them in order, so when the last value is there all were, and a little later
     * all completions are in the CQ.
     */
    @Setup(Level.Invocation)
    public void refill() throws VerbsException {
        if (left > 0) {
            return;
        }
        epoch++;
        for (int k = 0; k < FILL; k += BATCH) {
            writes.clear();
            for (int i = 0; i < BATCH; i++) {
                long source = 8L * (k + i);
                memory.set(ValueLayout.JAVA_LONG, source, epoch << 32 | (k + i));
                writes.write(k + i, lb.mr, source, 8, remote, 1 << 19);
            }
            lb.a.post(writes);
        }
        long last = epoch << 32 | (FILL - 1);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 1 << 19) != last) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the writes did not land in 60 s");
            }
            Thread.onSpinWait();
        }
        long until = System.nanoTime() + 5_000_000; // the acknowledgements, hence the completions (no Thread.sleep:
        while (System.nanoTime() < until) {          // it allocates, and the gc profiler counts set-up too)
            Thread.onSpinWait();
        }
        left = FILL;
    }

    @Benchmark
    public int empty() throws VerbsException {
        return idle.poll(wcs);
    }

    @Benchmark
    public int full16() throws VerbsException {
        int n = lb.cqA.poll(wcs);
        left -= n;
        return n;
    }
}
