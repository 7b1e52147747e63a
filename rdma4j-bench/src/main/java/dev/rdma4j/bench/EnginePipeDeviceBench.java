package dev.rdma4j.bench;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionHandler;
import dev.rdma4j.engine.CompletionView;
import dev.rdma4j.engine.PollingMode;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * rdma4j's own cost of what {@link NettyDeviceBench} measures through Netty, for the transport's "overhead at most
 * 1.3x rdma4j's own" goal: the same patterns with the verbs and the {@link CompletionEngine} and nothing else. Two
 * RC queue pairs on the device connected to each other, each side with its own EVENT-mode engine (its own thread,
 * as each Netty side has its event loop), whose {@link CompletionHandler} does the side's work on that thread, from
 * registered memory (no copy, no ByteBuf, no pipeline).
 *
 * <ul>
 *   <li>{@code echo64}: A sends 64 bytes, B's handler reposts the receive and sends 64 bytes back, A's handler on
 *       their arrival reposts and sends the next; {@value NettyDeviceBench#ROUND_TRIPS} round trips per invocation,
 *       the score one round trip (compare with {@code NettyDeviceBench.echo64}).</li>
 *   <li>{@code stream64k}: A sends 64 KiB messages to B's 32 receive buffers of 64 KiB (the transport's default
 *       count and size) with credits: a send only with a credit in hand, B returning 8 credits in the immediate of an
 *       empty message each time it reposted 8 receives (never RNR); the sendable messages of a pass are posted as one
 *       list; {@value NettyDeviceBench#CHUNKS} messages per invocation, ended when B has them all. Score: messages
 *       per second, MiB/s = score / 16 (compare with {@code NettyDeviceBench.stream64k}).</li>
 * </ul>
 */
public class EnginePipeDeviceBench {
    static final int SMALL = NettyDeviceBench.SMALL;
    static final int CHUNK = NettyDeviceBench.CHUNK;
    /** B's receive buffers in the stream: A's initial credits. */
    static final int WINDOW = 32;
    /** Credits B returns in one message. */
    static final int GRANT = 8;
    /** A's receives for B's credit messages (at most WINDOW / GRANT are ever outstanding). */
    static final int CREDIT_RECEIVES = 8;
    /** wr_id of a send (receives have their buffer's index). */
    static final long SEND = -1;

    /** Two connected RC queue pairs, each on its own engine with a handler. */
    abstract static class Pair {
        Context ctx;
        ProtectionDomain pd;
        MemoryRegion mr;
        CompletionEngine engineA;
        CompletionEngine engineB;
        CompletionQueue cqA;
        CompletionQueue cqB;
        QueuePair a;
        QueuePair b;
        /** Used on engine A's thread only. */
        final SendBatch sendA = new SendBatch(WINDOW, 1);
        final ReceiveBatch recvA = new ReceiveBatch(1, 1);
        /** Used on engine B's thread only. */
        final SendBatch sendB = new SendBatch(1, 1);
        final ReceiveBatch recvB = new ReceiveBatch(1, 1);
        volatile CompletableFuture<Void> done;

        void open(int regionBytes, int depth) throws VerbsException {
            try {
                ctx = Device.byNameOrDefault(null).open();
                pd = ctx.allocateProtectionDomain();
                mr = pd.allocate(regionBytes, AccessFlag.LOCAL_WRITE);
                engineA = CompletionEngine.builder().mode(PollingMode.EVENT).name("bench-a").build();
                engineB = CompletionEngine.builder().mode(PollingMode.EVENT).name("bench-b").build();
                cqA = engineA.createCompletionQueueWithHandler(ctx, 2 * depth + 16, guarded(this::onA));
                cqB = engineB.createCompletionQueueWithHandler(ctx, 2 * depth + 16, guarded(this::onB));
                a = QueuePair.builder(pd, QpType.RC).completionQueue(cqA).capacity(depth, depth).build();
                b = QueuePair.builder(pd, QpType.RC).completionQueue(cqB).capacity(depth, depth).build();
                QpEndpoint ea = a.localEndpoint(0x1111);
                QpEndpoint eb = b.localEndpoint(0x2222);
                a.connect(eb, 0x1111);
                b.connect(ea, 0x2222);
            } catch (VerbsException | RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        /** A handler that fails the invocation on a failed completion or an exception of its own. */
        private CompletionHandler guarded(CompletionHandler h) {
            return c -> {
                try {
                    if (!c.isSuccess()) {
                        throw new IllegalStateException("a completion failed: " + c);
                    }
                    h.onCompletion(c);
                } catch (RuntimeException e) {
                    CompletableFuture<Void> d = done;
                    if (d != null) {
                        d.completeExceptionally(e);
                    }
                }
            };
        }

        private static void closeAll(AutoCloseable... all) {
            for (AutoCloseable c : all) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        throw new IllegalStateException("closing " + c, e);
                    }
                }
            }
        }

        abstract void onA(CompletionView c);

        abstract void onB(CompletionView c);

        static void check(int rc, String what) {
            if (rc != 0) {
                throw new IllegalStateException(what + ": errno " + rc);
            }
        }

        /** Runs {@code start} on engine A's thread and waits for the invocation's end. */
        void run(Runnable start) throws Exception {
            CompletableFuture<Void> d = new CompletableFuture<>();
            done = d;
            engineA.execute(start);
            d.get(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
        }

        @TearDown(Level.Trial)
        public void close() {
            // as LoopbackPair and EngineDeviceBench: queue pairs and CQs, then the engines, then the rest
            closeAll(a, b, cqA, cqB);
            closeAll(engineA, engineB);
            closeAll(mr, pd, ctx);
            sendA.close();
            recvA.close();
            sendB.close();
            recvB.close();
            a = b = null;
            cqA = cqB = null;
            mr = null;
            pd = null;
            ctx = null;
            engineA = engineB = null;
        }
    }

    /** {@code echo64}: 4 receives of 64 bytes a side, one send buffer a side. */
    @State(Scope.Benchmark)
    public static class Echo extends Pair {
        static final int RECEIVES = 4;
        // region: [A's send][B's send][A's receives][B's receives]
        static final long SEND_A = 0;
        static final long SEND_B = SMALL;
        static final long RECV_A = 2 * SMALL;
        static final long RECV_B = RECV_A + RECEIVES * SMALL;
        private int remaining; // engine A's thread

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open((int) (RECV_B + RECEIVES * SMALL), 16);
            for (int i = 0; i < RECEIVES; i++) {
                a.post(recvA.clear().receive(i, mr, RECV_A + i * SMALL, SMALL));
                b.post(recvB.clear().receive(i, mr, RECV_B + i * SMALL, SMALL));
            }
            roundTrips(NettyDeviceBench.ROUND_TRIPS); // outside the measurement
        }

        void roundTrips(int n) throws Exception {
            run(() -> {
                remaining = n;
                sendFromA();
            });
        }

        private void sendFromA() {
            check(a.tryPost(sendA.clear().send(SEND, mr, SEND_A, SMALL)), "A's send");
        }

        @Override
        void onA(CompletionView c) {
            if (!c.isReceive()) {
                return;
            }
            int slot = (int) c.wrId();
            check(a.tryPost(recvA.clear().receive(slot, mr, RECV_A + slot * SMALL, SMALL)), "A's receive");
            if (--remaining == 0) {
                done.complete(null);
            } else {
                sendFromA();
            }
        }

        @Override
        void onB(CompletionView c) {
            if (!c.isReceive()) {
                return;
            }
            int slot = (int) c.wrId();
            check(b.tryPost(recvB.clear().receive(slot, mr, RECV_B + slot * SMALL, SMALL)), "B's receive");
            check(b.tryPost(sendB.clear().send(SEND, mr, SEND_B, SMALL)), "B's send");
        }
    }

    /** {@code stream64k}: B's {@value #WINDOW} receives of 64 KiB, A's credit receives, A's one send buffer. */
    @State(Scope.Benchmark)
    public static class Stream extends Pair {
        static final int DEPTH = 64;
        // region: [A's send, 64 KiB][B's receives][A's credit receives, 64 B each]
        static final long SEND_A = 0;
        static final long RECV_B = CHUNK;
        static final long RECV_A = RECV_B + (long) WINDOW * CHUNK;
        // engine A's thread
        private int remaining;
        private int credits = WINDOW;
        private int sqOutstanding;
        // engine B's thread
        private long received;
        private int owed;
        /** Messages B must have received for the invocation to end. */
        private volatile long target;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open((int) (RECV_A + CREDIT_RECEIVES * SMALL), DEPTH);
            for (int i = 0; i < WINDOW; i++) {
                b.post(recvB.clear().receive(i, mr, RECV_B + (long) i * CHUNK, CHUNK));
            }
            for (int i = 0; i < CREDIT_RECEIVES; i++) {
                a.post(recvA.clear().receive(i, mr, RECV_A + i * SMALL, SMALL));
            }
            stream(NettyDeviceBench.CHUNKS); // outside the measurement
        }

        void stream(int n) throws Exception {
            target += n; // B's handler reads it only once this invocation's messages arrive, after the run's start
            run(() -> {
                remaining += n;
                pump();
            });
        }

        /** On engine A's thread: posts what credits and the send queue allow, as one list. */
        private void pump() {
            sendA.clear();
            int n = 0;
            while (remaining > 0 && credits > 0 && sqOutstanding < DEPTH && n < WINDOW) {
                sendA.send(SEND, mr, SEND_A, CHUNK);
                remaining--;
                credits--;
                sqOutstanding++;
                n++;
            }
            if (n > 0) {
                check(a.tryPost(sendA), "A's sends");
            }
        }

        @Override
        void onA(CompletionView c) {
            if (c.isReceive()) { // B's credits
                credits += c.immediateData();
                int slot = (int) c.wrId();
                check(a.tryPost(recvA.clear().receive(slot, mr, RECV_A + slot * SMALL, SMALL)), "A's receive");
            } else {
                sqOutstanding--;
            }
            pump();
        }

        @Override
        void onB(CompletionView c) {
            if (!c.isReceive()) {
                return; // a credit message went
            }
            int slot = (int) c.wrId();
            check(b.tryPost(recvB.clear().receive(slot, mr, RECV_B + (long) slot * CHUNK, CHUNK)), "B's receive");
            if (++owed == GRANT) {
                owed = 0;
                check(b.tryPost(sendB.clear().sendWithImmediate(SEND, mr, 0, 0, GRANT)), "B's credits");
            }
            if (++received == target) {
                done.complete(null);
            }
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(NettyDeviceBench.ROUND_TRIPS)
    public void echo64(Echo s) throws Exception {
        s.roundTrips(NettyDeviceBench.ROUND_TRIPS);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(NettyDeviceBench.CHUNKS)
    public void stream64k(Stream s) throws Exception {
        s.stream(NettyDeviceBench.CHUNKS);
    }
}
