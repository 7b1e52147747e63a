package dev.rdma4j.bench;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.WcView;
import dev.rdma4j.internal.ffi.WrView;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
 * The floor under {@code perf read_lat}: one 64-byte RDMA READ on a loopback RC pair, posted and polled until its
 * completion, three ways in one JVM: {@link #api} through rdma4j ({@code SendBatch}, {@code QueuePair.tryPost},
 * {@code CompletionQueue.poll}); {@link #raw} with the downcalls rdma4j makes ({@code DataPath.post} and
 * {@code DataPath.pollCq}: handles as {@code long}s, the request and completion arrays as segments) on a request
 * encoded once, none of rdma4j's book-keeping; {@link #rawLong} through downcall handles that take every pointer
 * as a {@code long}. {@code api} against {@code raw} is what rdma4j's layers cost a round trip; {@code raw} against
 * a C loop doing the same ({@code ib_read_lat}) is what the JVM and FFM cost; {@link #rawLongAfterGap} shows what
 * the guest charges for any work done between a completion and the next post. The set-up reaches past the API for
 * the native handles (through {@link Internals}, class path only); the measured calls are the public API's,
 * {@code DataPath}'s and the downcall handles'.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@SuppressWarnings("restricted")
public class ReadLoopDeviceBench {
    private static final MethodHandle POST_LONG = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG), Linker.Option.critical(false));
    private static final MethodHandle POLL_LONG = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG), Linker.Option.critical(false));

    static final long GAP_NS = 5_000;

    private LoopbackPair lb;
    private CompletionQueue cqA;
    private QueuePair a;
    private MemoryRegion mr;
    private RemoteRegion remote;
    private SendBatch send;
    private WorkCompletions wcs;
    private Arena arena;
    private MemorySegment wr;
    private MemorySegment badWr;
    private MemorySegment wc;
    private MemorySegment postFn;
    private MemorySegment pollFn;
    private long wrAddr;
    private long badWrAddr;
    private long wcAddr;
    private long qpAddr;
    private long cqAddr;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        lb = new LoopbackPair(16, null);
        a = lb.a;
        cqA = lb.cqA;
        mr = lb.mr;
        remote = mr.remote();
        send = new SendBatch(1, 1);
        wcs = new WorkCompletions(1);

        arena = Arena.ofShared();
        MemorySegment sge = arena.allocate(WrView.SGE_SIZE, 8);
        WrView.sge(sge, 0, mr.segment().address(), 64, mr.lkey());
        wr = arena.allocate(WrView.SEND_SIZE, 8);
        WrView.send(wr, 0, sge.address(), WrView.WR_RDMA_READ, WrView.SEND_SIGNALED, 0);
        WrView.sendNumSge(wr, 0, 1);
        WrView.rdma(wr, 0, mr.segment().address() + 4096, mr.rkey());
        badWr = arena.allocate(ValueLayout.ADDRESS);
        wc = arena.allocate(WcView.SIZE * 4, 8);
        postFn = DataPath.op(Internals.handle(lb.ctx), DataPath.Op.POST_SEND);
        pollFn = DataPath.op(Internals.handle(lb.ctx), DataPath.Op.POLL_CQ);
        wrAddr = wr.address();
        badWrAddr = badWr.address();
        wcAddr = wc.address();
        qpAddr = RawDowncalls.qpAddress(a);
        cqAddr = Internals.handle(cqA).address();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        send.close();
        wcs.close();
        lb.close();
        arena.close();
    }

    /** Through rdma4j's API, as {@code perf read_lat} does. */
    @Benchmark
    public int api() throws VerbsException {
        send.clear().read(0, mr, 0, 64, remote, 4096);
        int rc = a.tryPost(send);
        if (rc != 0) {
            throw new IllegalStateException("tryPost: errno " + rc);
        }
        int n;
        while ((n = cqA.poll(wcs)) == 0) {
            Thread.onSpinWait();
        }
        if (!wcs.isSuccess(0)) {
            throw new IllegalStateException("completion failed: " + wcs.status(0));
        }
        return n;
    }

    /** The same two downcalls rdma4j makes, nothing else. */
    @Benchmark
    public int raw() {
        return RawDowncalls.postAndAwait(postFn, qpAddr, wr, badWrAddr, pollFn, cqAddr, wc);
    }

    /**
     * {@link #rawLong} after {@value #GAP_NS} ns of spinning before each post: what work between a completion and
     * the next post costs. In the TCG guest without {@code idle=poll} the vCPU that runs rxe's kernel work halts
     * in that gap and takes ~30 us to wake, so this costs far more than the gap; with {@code idle=poll}
     * ({@code scripts/softroce --kernel-args idle=poll}) about the gap.
     */
    @Benchmark
    public int rawLongAfterGap() throws Throwable {
        long until = System.nanoTime() + GAP_NS;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        return rawLong();
    }

    /** The two downcalls with {@code long} arguments (no segment to unwrap per call). */
    @Benchmark
    public int rawLong() throws Throwable {
        int rc = (int) POST_LONG.invokeExact(postFn, qpAddr, wrAddr, badWrAddr);
        if (rc != 0) {
            throw new IllegalStateException("ibv_post_send: errno " + rc);
        }
        int n;
        while ((n = (int) POLL_LONG.invokeExact(pollFn, cqAddr, 4, wcAddr)) == 0) {
            Thread.onSpinWait();
        }
        if (n < 0 || WcView.status(wc, 0) != 0) {
            throw new IllegalStateException("ibv_poll_cq: " + n + ", status " + WcView.status(wc, 0));
        }
        return n;
    }
}
