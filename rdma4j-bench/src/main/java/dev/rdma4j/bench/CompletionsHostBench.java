package dev.rdma4j.bench;

import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.ffi.WcView;
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
 * Reading polled completions from a {@link WorkCompletions} batch: in place ({@code read16}: wr_id, status,
 * opcode, length, direction of 16 completions) and as an immutable {@link WorkCompletion} copy ({@code get},
 * which allocates by contract). The batch is filled by hand as a poll leaves it, in the set-up (package-private
 * setters, through {@link Internals}); the measured calls are the public API's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CompletionsHostBench {
    private WorkCompletions wcs;

    @Setup
    public void setUp() {
        wcs = new WorkCompletions(16);
        for (int i = 0; i < 16; i++) {
            WcView.wrId(Internals.segment(wcs), i, 1000 + i); // status 0 (success), opcode 0 (SEND) or RECV below
            Internals.receive(wcs, i, (i & 1) == 1);
            if ((i & 1) == 1) {
                WcView.opcode(Internals.segment(wcs), i, 128); // IBV_WC_RECV
            }
        }
        Internals.count(wcs, 16);
    }

    @TearDown
    public void tearDown() {
        wcs.close();
    }

    /** wrId, status, opcode, byteLength and isReceive of 16 completions, in place. */
    @Benchmark
    public long read16() {
        long sum = 0;
        for (int i = 0; i < wcs.count(); i++) {
            sum += wcs.wrId(i) + wcs.byteLength(i) + wcs.status(i).ordinal() + wcs.opcode(i).ordinal()
                    + (wcs.isReceive(i) ? 1 : 0);
        }
        return sum;
    }

    /** The immutable copy of one completion (allocates one {@link WorkCompletion}). */
    @Benchmark
    public WorkCompletion get() {
        return wcs.get(1);
    }
}
