package dev.rdma4j.bench;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * Encoding work requests into a reusable {@link SendBatch} (the native {@code ibv_send_wr} chain and its
 * {@code ibv_sge}s): what every post costs before the provider is called. Host only: the region is
 * {@code MemoryRegion.unregistered} (package-private, made in the set-up through {@link Internals}); the measured
 * calls are the public API's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EncodeHostBench {
    private Arena arena;
    private MemoryRegion region;
    private RemoteRegion remote;
    private SendBatch batch;
    private SendBatch inlineBatch;
    private ReceiveBatch receives;
    private MemorySegment heapData;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        region = Internals.unregisteredRegion(arena.allocate(1 << 16, 4096), 0x1111, 0x2222);
        remote = new RemoteRegion(0x7f0000000000L, 1 << 20, 0x3333);
        batch = new SendBatch(4, 1);
        inlineBatch = new SendBatch(1, 1, 64);
        receives = new ReceiveBatch(4, 1);
        heapData = MemorySegment.ofArray(new byte[32]);
    }

    @TearDown
    public void tearDown() {
        batch.close();
        inlineBatch.close();
        receives.close();
        region.close();
        arena.close();
    }

    /** One signaled send of 64 bytes. */
    @Benchmark
    public SendBatch send() {
        return batch.clear().send(1, region, 0, 64);
    }

    /** A chain of four: send, RDMA write (unsignaled), RDMA read, send. */
    @Benchmark
    public SendBatch sendWriteReadSend() {
        return batch.clear().send(1, region, 0, 64)
                .write(2, region, 64, 256, remote, 0).unsignaled()
                .read(3, region, 512, 256, remote, 4096)
                .send(4, region, 1024, 64);
    }

    /** One inline send of 32 bytes from a heap array (copied into the batch). */
    @Benchmark
    public SendBatch sendInline() {
        return inlineBatch.clear().sendInline(1, heapData);
    }

    /** A chain of four receives. */
    @Benchmark
    public ReceiveBatch receive4() {
        return receives.clear().receive(1, region, 0, 1024).receive(2, region, 1024, 1024)
                .receive(3, region, 2048, 1024).receive(4, region, 3072, 1024);
    }
}
