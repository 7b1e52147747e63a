package dev.rdma4j.bench;

import dev.rdma4j.RemoteRegion;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
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
 * Round trips through the {@link CompletionEngine}: post through an {@link AsyncQueuePair}, the engine thread
 * drains the CQ and completes the future ({@code drain} → {@code AsyncQueuePair.complete}), the caller joins
 * it. {@code write}: one RDMA write; {@code sendReceive}: a receive on one side, a send on the other, both
 * futures joined. The futures are the API's, so the B/op includes them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EngineDeviceBench {
    @Param({"EVENT"})
    public PollingMode mode;

    private CompletionEngine engine;
    private LoopbackPair lb;
    private AsyncQueuePair a;
    private AsyncQueuePair b;
    private RemoteRegion remote;

    @Setup(Level.Trial)
    public void setUp() throws VerbsException {
        engine = CompletionEngine.builder().mode(mode).build();
        lb = new LoopbackPair(64, engine);
        a = engine.wrap(lb.a);
        b = engine.wrap(lb.b);
        remote = lb.mr.remote();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
        lb.close();
        engine.close();
    }

    @Benchmark
    public WorkCompletion write() {
        return a.writeAsync(lb.mr, 0, 64, remote, 4096).join();
    }

    @Benchmark
    public WorkCompletion sendReceive() {
        var received = b.receiveAsync(lb.mr, 8192, 64);
        a.sendAsync(lb.mr, 0, 64).join();
        return received.join();
    }
}
