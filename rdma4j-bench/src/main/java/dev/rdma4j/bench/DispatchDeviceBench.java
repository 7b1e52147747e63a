package dev.rdma4j.bench;

import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionView;
import dev.rdma4j.engine.PollingMode;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The engine's dispatch without futures: a 64-byte RDMA write posted with {@code tryPost} on a QP whose CQ the
 * engine drives with a {@link dev.rdma4j.engine.CompletionHandler}; the engine thread drains the CQ and hands the
 * completion to the handler in place ({@link CompletionView}), which counts it; the benchmark thread spins until
 * it did. Post, drain and dispatch allocate nothing, so B/op is the harness's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DispatchDeviceBench {
    @Param({"EVENT"})
    public PollingMode mode;

    private CompletionEngine engine;
    private LoopbackPair lb;
    private RemoteRegion remote;
    private final SendBatch batch = new SendBatch(1, 1);
    private volatile long dispatched;
    private volatile WcStatus failure;
    private long posted;

    @Setup(Level.Trial)
    public void setUp() throws VerbsException {
        engine = CompletionEngine.builder().mode(mode).build();
        lb = new LoopbackPair(64, engine, 0, this::onCompletion);
        remote = lb.mr.remote();
    }

    /** On the engine thread. */
    private void onCompletion(CompletionView c) {
        if (!c.isSuccess()) {
            failure = c.status();
        }
        dispatched = dispatched + 1; // one writer: the engine thread
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        batch.close();
        lb.close();
        engine.close();
    }

    @Benchmark
    public long write() {
        int rc = lb.a.tryPost(batch.clear().write(posted, lb.mr, 0, 64, remote, 4096));
        if (rc != 0) {
            throw new IllegalStateException("ibv_post_send: errno " + rc);
        }
        posted++;
        while (dispatched < posted) {
            if (failure != null) {
                throw new IllegalStateException("the write completed with " + failure);
            }
            Thread.onSpinWait();
        }
        return posted;
    }
}
