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
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Control;

/**
 * The floor under {@code perf write_lat}: a ping-pong of 64-byte inline RDMA WRITEs between two threads on a
 * loopback RC pair, each side spinning on the last byte of its buffer (perftest's write_lat protocol), as a JMH
 * group of two threads: side {@code A} writes message {@code i} and waits for the reply {@code i}, so its time per
 * operation is a round trip; side {@code B} waits and replies. Group {@code api} posts and polls through rdma4j
 * ({@code SendBatch}, {@code QueuePair.tryPost}, {@code CompletionQueue.poll}), encoding each request; group
 * {@code prepared} reposts through rdma4j a request encoded once ({@code SendBatch} reused as it is, perftest's
 * way and {@code rdma4j perf}'s); group {@code raw} makes the same two downcalls ({@code DataPath.post},
 * {@code DataPath.pollCq}) on requests encoded once. One guest run (2026-11-25, in that order): api 355-586 µs,
 * prepared 278-451 µs, raw 194-226 µs a round trip. In one guest run (idle=poll)
 * a scratch harness measured raw 94-113 µs and api 236-275 µs a half round trip, and the same loop in C with two
 * threads 110-129 µs: the JVM is at C's floor here, rdma4j's layers are not. The set-up reaches past the API for
 * the native handles (through {@link Internals}, class path only); the measured calls are the public API's and
 * {@code DataPath}'s.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WritePingPongDeviceBench {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final long A_AREA = 0;
    private static final long B_AREA = 4096;
    private static final long A_SRC = 8192;
    private static final long B_SRC = 12288;
    private static final int LAST = 63;

    /** How a side posts: encoding each request, reposting one encoded once, or the bare downcalls. */
    enum Path {
        API, PREPARED, RAW
    }

    /** One side: its QP and CQ, the byte it polls, its source, its requests encoded once (for {@code raw}). */
    static final class Side implements AutoCloseable {
        private final QueuePair qp;
        private final CompletionQueue cq;
        private final MemoryRegion mr;
        private final RemoteRegion remote;
        private final MemorySegment buf;
        private final long myArea;
        private final long peerArea;
        private final long src;
        private final SendBatch send = new SendBatch(1, 1);
        /** The request encoded once, for {@code prepared}: reposted unchanged, as perftest does. */
        private final SendBatch prepared = new SendBatch(1, 1);
        private final WorkCompletions wcs = new WorkCompletions(4);
        private final Arena arena = Arena.ofShared();
        private final MemorySegment postFn;
        private final MemorySegment pollFn;
        private final long qpAddress;
        private final long cqAddress;
        private final MemorySegment wr;
        private final long badWr;
        private final MemorySegment wc;
        /** The last message this side sent (A) or answered (B). */
        private byte last;
        /** A: its last message still awaits its reply (the measurement stopped while it waited). */
        private boolean awaiting;

        Side(LoopbackPair lb, QueuePair qp, CompletionQueue cq, long myArea, long peerArea, long src) {
            this.qp = qp;
            this.cq = cq;
            this.mr = lb.mr;
            this.remote = lb.mr.remote();
            this.buf = lb.mr.segment();
            this.myArea = myArea;
            this.peerArea = peerArea;
            this.src = src;
            postFn = DataPath.op(Internals.handle(lb.ctx), DataPath.Op.POST_SEND);
            pollFn = DataPath.op(Internals.handle(lb.ctx), DataPath.Op.POLL_CQ);
            qpAddress = RawDowncalls.qpAddress(qp);
            cqAddress = Internals.handle(cq).address();
            MemorySegment sge = arena.allocate(WrView.SGE_SIZE, 8);
            WrView.sge(sge, 0, buf.address() + src, 64, mr.lkey());
            wr = arena.allocate(WrView.SEND_SIZE, 8);
            WrView.send(wr, 0, sge.address(), WrView.WR_RDMA_WRITE, WrView.SEND_SIGNALED | WrView.SEND_INLINE, 0);
            WrView.sendNumSge(wr, 0, 1);
            WrView.rdma(wr, 0, buf.address() + peerArea, mr.rkey());
            badWr = arena.allocate(ValueLayout.ADDRESS).address();
            wc = arena.allocate(WcView.SIZE * 4, 8);
            prepared.write(0, mr, src, 64, remote, peerArea).inline();
        }

        /** Spins until this side's byte is {@code v}; false if the measurement stopped first. */
        boolean await(byte v, Control control) {
            while ((byte) BYTE.getVolatile(buf, myArea + LAST) != v) {
                if (control.stopMeasurement) {
                    return false;
                }
                Thread.onSpinWait();
            }
            return true;
        }

        /** Writes {@code v} as the last byte of a 64-byte message to the peer and waits for its completion. */
        void write(byte v, Path path) throws VerbsException {
            BYTE.setVolatile(buf, src + LAST, v);
            if (path != Path.RAW) {
                SendBatch batch = prepared;
                if (path == Path.API) {
                    batch = send;
                    send.clear().write(0, mr, src, 64, remote, peerArea);
                    send.inline();
                }
                int rc = qp.tryPost(batch);
                if (rc != 0) {
                    throw new IllegalStateException("tryPost: errno " + rc);
                }
                while (cq.poll(wcs) == 0) {
                    Thread.onSpinWait();
                }
                if (!wcs.isSuccess(0)) {
                    throw new IllegalStateException("completion failed: " + wcs.status(0));
                }
            } else {
                RawDowncalls.postAndAwait(postFn, qpAddress, wr, badWr, pollFn, cqAddress, wc);
            }
        }

        /** Side A: one round trip (or the end of one the previous iteration left waiting). */
        int initiate(Control control, Path api) throws VerbsException {
            if (!awaiting) {
                last++;
                write(last, api);
                awaiting = true;
            }
            if (await(last, control)) {
                awaiting = false;
            }
            return last;
        }

        /** Side B: waits for the next message and answers it. */
        int answer(Control control, Path api) throws VerbsException {
            byte next = (byte) (last + 1);
            if (await(next, control)) {
                last = next;
                write(next, api);
            }
            return last;
        }

        @Override
        public void close() {
            send.close();
            prepared.close();
            wcs.close();
            arena.close();
        }
    }

    /** The pair and its two sides, shared by the group's two threads. */
    @State(Scope.Group)
    public static class Pair {
        LoopbackPair lb;
        Side a;
        Side b;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            lb = new LoopbackPair(16, null, 64);
            lb.mr.segment().fill((byte) 0);
            a = new Side(lb, lb.a, lb.cqA, A_AREA, B_AREA, A_SRC);
            b = new Side(lb, lb.b, lb.cqB, B_AREA, A_AREA, B_SRC);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            a.close();
            b.close();
            lb.close();
        }
    }

    /** Through rdma4j, side A: a round trip. */
    @Benchmark
    @Group("api")
    @GroupThreads(1)
    public int apiA(Pair p, Control control) throws VerbsException {
        return p.a.initiate(control, Path.API);
    }

    /** Through rdma4j, side B: waits and answers. */
    @Benchmark
    @Group("api")
    @GroupThreads(1)
    public int apiB(Pair p, Control control) throws VerbsException {
        return p.b.answer(control, Path.API);
    }

    /** Through rdma4j, reposting a request encoded once (perftest's way), side A: a round trip. */
    @Benchmark
    @Group("prepared")
    @GroupThreads(1)
    public int preparedA(Pair p, Control control) throws VerbsException {
        return p.a.initiate(control, Path.PREPARED);
    }

    /** Through rdma4j, reposting a request encoded once, side B: waits and answers. */
    @Benchmark
    @Group("prepared")
    @GroupThreads(1)
    public int preparedB(Pair p, Control control) throws VerbsException {
        return p.b.answer(control, Path.PREPARED);
    }

    /** The two downcalls alone, side A: a round trip. */
    @Benchmark
    @Group("raw")
    @GroupThreads(1)
    public int rawA(Pair p, Control control) throws VerbsException {
        return p.a.initiate(control, Path.RAW);
    }

    /** The two downcalls alone, side B: waits and answers. */
    @Benchmark
    @Group("raw")
    @GroupThreads(1)
    public int rawB(Pair p, Control control) throws VerbsException {
        return p.b.answer(control, Path.RAW);
    }
}
