package dev.rdma4j.tools.perf;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairEx;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.WcStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * The measuring loops of {@code rdma4j perf}, one per kind of test, with perftest's semantics:
 * <ul>
 * <li><b>send_lat</b>: ping-pong of sends; the client sends first, each side posts its next send once the peer's
 *     message arrived; the interval between two posts of one side is a round trip.
 * <li><b>write_lat</b>: ping-pong of RDMA writes; each side spins on the last byte of its buffer until the peer's
 *     write of iteration {@code i} set it to {@code (byte) i}, then writes its own and waits for its completion.
 * <li><b>read_lat, atomic_lat</b>: the client posts one read (or CAS/FAA) and polls its completion; the interval
 *     between two posts is the round trip.
 * <li><b>write_bw, read_bw, send_bw</b>: the client keeps {@code -t} requests outstanding per QP, asking for a
 *     completion every {@code cqMod} requests (and on the last); the server of send_bw counts its receives and
 *     reposts them.
 * </ul>
 * The loops allocate nothing and, like perftest, encode nothing per iteration: each run encodes its requests once
 * ({@link SendBatch}, and a {@link ReceiveBatch} per QP) and reposts them with {@link QueuePair#tryPost}, setting
 * only the wr_id where it counts ({@link SendBatch#setWrId}); completions come from {@link PerfCompletions},
 * intervals go into a {@link Histogram}, timestamps into arrays made before.
 * With {@code -D} the client ends a run at the deadline and tells the server over TCP (a sync byte a watcher
 * thread of the server reads).
 */
final class PerfLoops implements AutoCloseable {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final long QP_SHIFT = 40;
    private static final long COUNT_MASK = (1L << QP_SHIFT) - 1;
    private static final long MAX_INTERVAL_NS = 3_600_000_000_000L;
    /**
     * Iterations of each call of a latency loop in the warm-up ({@link #inRuns}): few, so that the loop's back-edge
     * is the common case and the compiled loop keeps no trap on it (as net-pingpong's runs of 8).
     */
    static final long WARMUP_RUN = 8;

    private final PerfParameters p;
    private final QueuePair[] qps;
    /** With {@code --wr-api}: each QP's extended posting API (ibv_wr_*), which the sends go through. */
    private final QueuePairEx[] exs;
    private final MemoryRegion mr;
    private final MemorySegment buf;
    private final long m;
    private final RemoteRegion[] remotes;
    private final PerfCompletions cq;
    private final int inline;
    private final Socket socket;
    /** The latency tests' request, encoded once a run. */
    private final SendBatch send = new SendBatch(1, 1);
    /** The bandwidth tests' requests per QP, encoded once a run: signaled (every cqMod-th and the last) or not. */
    private final SendBatch[] signaled;
    private final SendBatch[] unsignaled;
    /** Each QP's receive (send tests), encoded once: wr_id = the QP's index. */
    private final ReceiveBatch[] recvs;
    private final Histogram histogram = PerfResults.histogram();
    /** The instruction-count marks around each measured loop ({@code --icount-marks}, the client), or null. */
    private InstructionMarks marks;
    /** The marks around each look of a measured spin on memory ({@code --icount-marks}, both sides), or null. */
    private InstructionMarks spinMarks;
    private boolean marked;
    private final long[] scnt;
    private final long[] ccnt;
    private final long[] limit;
    private final long[] posted;
    private final long[] completed;
    private final boolean client;
    private final boolean receives;
    private volatile boolean stopped;
    // send_lat's completion bookkeeping
    private int sendsOut;
    private long arrived;

    PerfLoops(PerfParameters p, List<QueuePair> qps, MemoryRegion mr, long m, List<RemoteRegion> remotes,
            PerfCompletions cq, int inline, Socket socket) {
        this.p = p;
        this.qps = qps.toArray(QueuePair[]::new);
        this.exs = p.wrApi() ? qps.stream().map(QueuePairEx::of).toArray(QueuePairEx[]::new) : null;
        this.mr = mr;
        this.buf = mr.segment();
        this.m = m;
        this.remotes = remotes.toArray(RemoteRegion[]::new);
        this.cq = cq;
        this.inline = inline;
        this.socket = socket;
        this.client = p.isClient();
        this.scnt = new long[qps.size()];
        this.ccnt = new long[qps.size()];
        this.limit = new long[qps.size()];
        long total = Math.max(p.iterations(), p.warmup()) * qps.size();
        boolean stamps = !p.test().isLatency() && p.duration() == 0 && total <= PerfResults.MAX_TIMESTAMPS;
        this.posted = stamps ? new long[(int) total] : null;
        this.completed = stamps ? new long[(int) total] : null;
        this.receives = p.test() == PerfKind.SEND_LAT || (p.test() == PerfKind.SEND_BW && !client);
        int q = qps.size();
        this.signaled = new SendBatch[q];
        this.unsignaled = new SendBatch[q];
        this.recvs = new ReceiveBatch[receives ? q : 0];
        for (int i = 0; i < q; i++) {
            signaled[i] = new SendBatch(1, 1);
            unsignaled[i] = new SendBatch(1, 1);
        }
        for (int i = 0; i < recvs.length; i++) {
            recvs[i] = new ReceiveBatch(1, 1).receive(i, mr, m, (int) m);
        }
        buf.fill((byte) 0);
    }

    /**
     * Posts the receives of the sides that receive (send tests): {@code -r} per QP.
     *
     * @throws PerfException if the device refuses
     */
    void postReceives() throws PerfException {
        if (!receives) {
            return;
        }
        for (int q = 0; q < qps.length; q++) {
            for (int i = 0; i < p.rxDepth(); i++) {
                repost(q);
            }
        }
    }

    /**
     * Marks each measured loop from here on for an instruction count: the start mark before its first
     * iteration, the stop mark after its last, before its results are computed.
     *
     * @param marks the marks
     */
    void markWith(InstructionMarks marks) {
        this.marks = marks;
        this.spinMarks = marks;
    }

    /**
     * Marks the looks of each measured spin on memory ({@code write_lat}'s) from here on, on a side that does
     * not mark its loops (the server): its empty looks are then left out of the count, as the client's are.
     *
     * @param marks the marks
     */
    void markSpinsWith(InstructionMarks marks) {
        this.spinMarks = marks;
    }

    /** The loop's end: the stop mark, if the loop started with a start mark. */
    private void loopEnded() {
        if (marked) {
            marked = false;
            marks.stop();
        }
    }

    /**
     * One run of {@code n} iterations (or {@code duration} seconds) of {@code size} bytes.
     *
     * @param size     the message size
     * @param n        iterations (per QP), when {@code duration} is 0
     * @param duration seconds, or 0
     * @param record   whether to measure (false in the warm-up)
     * @return the run's figures, which {@link #row} makes the row (after the barrier that follows the run), or
     *         {@code null} on a side that does not report
     * @throws PerfException if a post or a completion fails, or the peer leaves
     */
    Object run(long size, long n, int duration, boolean record) throws PerfException {
        long deadline = duration > 0 ? System.nanoTime() + duration * 1_000_000_000L : Long.MAX_VALUE;
        long iters = duration > 0 ? Long.MAX_VALUE : n;
        Thread watcher = null;
        stopped = false;
        boolean loops = client || p.test().serverReports();
        if (duration > 0 && !client && loops) {
            watcher = Thread.ofVirtual().name("perf-stop").start(this::awaitStop);
        }
        histogram.reset();
        Object row = null;
        if (record && marks != null) {
            marked = true;
            marks.start();
        }
        if (loops && !record && duration == 0 && inRuns()) {
            for (long done = 0; done < n; done += WARMUP_RUN) { // both sides split n alike: runs of equal length
                loop(size, Math.min(WARMUP_RUN, n - done), Long.MAX_VALUE, false);
            }
        } else if (loops) {
            row = loop(size, iters, deadline, record);
        }
        loopEnded(); // a side without a loop of its own, or an empty run
        if (duration > 0) {
            if (watcher != null) {
                try {
                    watcher.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new PerfException("interrupted");
                }
                PerfRun.io("the peer left", () -> { // the answer to the client's end-of-run sync
                    OutputStream o = socket.getOutputStream();
                    o.write('R');
                    o.flush();
                    return null;
                });
            } else {
                PerfRun.sync(socket); // the client's end of run; a server without loop answers
            }
        }
        return record ? row : null;
    }

    /**
     * Whether the warm-up calls this test's loop in runs of {@link #WARMUP_RUN} iterations: send_lat's, when the
     * measuring thread runs it. Its loop has one back-edge an iteration (its waits are calls of their own), so a
     * warm-up that called it once a round left it to on-stack compilation only, and the measured call, made once,
     * ran in the interpreter until the back-edge counter next overflowed (every 1,024 back-edges under C2): 0 to
     * 1,023 of its iterations, a different number in each JVM (a C2 profile of send_lat's window: 1,643 user
     * instructions an iteration in the interpreter, 2026-11-29). Called 125-250 times a warm-up round, the loop is
     * compiled as a method within a few rounds, and the measured call enters it from its first iteration (the profile
     * after: 16 instructions an iteration in the interpreter) (net-pingpong's blocking loop had the same
     * fault). The other loops spin inside themselves, many back-edges an iteration, and are entered compiled within
     * a few iterations; write_lat's could not run in pieces anyway: it clears its buffer at the end of a call, which
     * only the barrier between rounds keeps from erasing the peer's next write.
     */
    private boolean inRuns() {
        return p.test() == PerfKind.SEND_LAT && !(cq instanceof PerfCompletions.Engine); // -e: the engine's handler
    }

    private Object loop(long size, long iters, long deadline, boolean record) throws PerfException {
        return switch (p.test()) {
            case SEND_LAT -> cq instanceof PerfCompletions.Engine e && deadline == Long.MAX_VALUE
                    ? sendLatencyOnEngine(e, (int) size, iters, record)
                    : sendLatency((int) size, iters, deadline, record);
            case WRITE_LAT -> writeLatency((int) size, iters, deadline, record);
            case READ_LAT, ATOMIC_LAT -> oneSidedLatency((int) size, iters, deadline, record);
            case WRITE_BW, READ_BW, SEND_BW -> client ? bandwidth((int) size, iters, deadline, record)
                    : sendBandwidthServer((int) size, iters, record);
        };
    }

    /** The server's watcher of a -D run: the client's sync byte ends the run. */
    private void awaitStop() {
        try {
            InputStream in = socket.getInputStream();
            in.read(); // 'R', or -1 when the client left: the run ends either way
        } catch (IOException e) {
            // the connection failed: the run ends, the next sync reports it
        } finally {
            stopped = true;
        }
    }

    // ------------------------------------------------------------------ latency

    private Object sendLatency(int size, long n, long deadline, boolean record) throws PerfException {
        QueuePair qp = qps[0];
        long s = 0;
        long r = 0;
        long first = 0;
        long prev = 0;
        send.clear().send(0, mr, 0, size);
        if (size <= inline) {
            send.inline();
        }
        while (s < n || r < n) {
            if (r < n && !(s == 0 && client)) {
                if (!awaitArrival()) {
                    break; // -D: the client ended the run
                }
                r++;
            }
            if (client && deadline != Long.MAX_VALUE && System.nanoTime() >= deadline) {
                break;
            }
            if (s < n) {
                awaitSendRoom();
                long now = System.nanoTime();
                first = s == 0 ? now : first;
                prev = interval(s, prev, now);
                post(qp, send);
                sendsOut++;
                s++;
            }
        }
        while (sendsOut > 0) {
            handleSendLatencyCompletions(cq.poll());
        }
        return latencyRow(size, s, prev - first);
    }

    /** How often the thread that waits for an engine-driven run looks whether the engine died meanwhile. */
    private static final long LOOK_AT_ENGINE_NANOS = 250_000_000;

    /**
     * send_lat when a completion engine drives the CQ ({@code -e}, {@code --mode}; runs of {@code -n} iterations):
     * the loop runs on the engine's thread, in its completion handler, as an event-driven application's would (and
     * as perftest's {@code -e} loop runs on the thread that reads the completion channel): a receive's completion
     * reposts the receive and posts the next send right there. The measuring thread only waits for the end of the
     * run; handing each completion over to it would add two thread switches to every round trip.
     */
    private Object sendLatencyOnEngine(PerfCompletions.Engine engine, int size, long n, boolean record)
            throws PerfException {
        send.clear().send(0, mr, 0, size);
        if (size <= inline) {
            send.inline();
        }
        OnEngineSendLatency run = new OnEngineSendLatency(n, record, Thread.currentThread());
        try {
            engine.execute(() -> run.start(engine));
            while (!run.done) {
                engine.checkAlive();
                // unparked at the end of the run; the timeout only looks at the engine now and then. It was 1 ms: in
                // the guest, about one wake-up of this thread an iteration (a timer, the futex, two context switches)
                // counted in the measured window, work perftest's -e loop does not have
                LockSupport.parkNanos(run, LOOK_AT_ENGINE_NANOS);
            }
        } finally {
            engine.ringAgain();
        }
        if (run.failure != null) {
            throw run.failure;
        }
        return latencyRow(size, run.s, run.prev - run.first);
    }

    /** {@link #sendLatencyOnEngine}'s loop, on the engine thread; its fields are read once {@link #done} is set. */
    private final class OnEngineSendLatency implements PerfCompletions.OnEngine {
        private final long n;
        private final boolean record;
        private final Thread waiter;
        private long s;
        private long r;
        private long first;
        private long prev;
        private int out;
        private boolean pending;
        private volatile PerfException failure;
        private volatile boolean done;

        OnEngineSendLatency(long n, boolean record, Thread waiter) {
            this.n = n;
            this.record = record;
            this.waiter = waiter;
        }

        /**
         * On the engine thread: takes over the completions (a peer's first message may already be in the ring),
         * then the client sends first.
         */
        void start(PerfCompletions.Engine engine) {
            engine.switchTo(this);
            if (client && s == 0 && !done) {
                try {
                    sendNext();
                } catch (PerfException | RuntimeException e) {
                    finish(e);
                }
            }
        }

        @Override
        public void completion(long wrId, boolean receive, WcStatus status) {
            if (done) {
                return;
            }
            try {
                if (status != WcStatus.SUCCESS) {
                    throw PerfCompletions.failed(status, wrId, receive);
                }
                if (receive) {
                    r++;
                    repost((int) wrId);
                    if (s < n) {
                        if (out < p.txDepth()) {
                            sendNext();
                        } else {
                            pending = true; // the send queue is full: the next send completion posts it
                        }
                    }
                } else {
                    out--;
                    if (pending) {
                        pending = false;
                        sendNext();
                    }
                }
                if (s >= n && r >= n && out == 0) {
                    finish(null);
                }
            } catch (PerfException | RuntimeException e) {
                finish(e);
            }
        }

        private void sendNext() throws PerfException {
            long now = System.nanoTime();
            first = s == 0 ? now : first;
            prev = interval(s, prev, now);
            post(qps[0], send);
            out++;
            s++;
        }

        private void finish(Exception e) {
            if (e != null) {
                failure = e instanceof PerfException pe ? pe : new PerfException(String.valueOf(e.getMessage()), e);
            }
            done = true;
            LockSupport.unpark(waiter);
        }
    }

    private boolean awaitArrival() throws PerfException {
        while (arrived == 0) {
            if (stopped) {
                return false;
            }
            handleSendLatencyCompletions(cq.poll());
        }
        arrived--;
        return true;
    }

    private void awaitSendRoom() throws PerfException {
        while (sendsOut >= p.txDepth()) {
            handleSendLatencyCompletions(cq.poll());
        }
    }

    private void handleSendLatencyCompletions(int k) throws PerfException {
        for (int i = 0; i < k; i++) {
            if (cq.receive[i]) {
                arrived++;
                repost((int) cq.wrId[i]);
            } else {
                sendsOut--;
            }
        }
    }

    private Object writeLatency(int size, long n, long deadline, boolean record) throws PerfException {
        QueuePair qp = qps[0];
        RemoteRegion remote = remotes[0];
        long pollAt = m + size - 1;
        long s = 0;
        long r = 0;
        long c = 0;
        long first = 0;
        long prev = 0;
        // the warm-up looks between the marks too: under C2 a path first taken in the measured run is compiled there
        // (an uncommon trap, a deoptimisation and C2's work inside the window: 0.5-1.3 M instructions an iteration)
        InstructionMarks spin = spinMarks;
        send.clear().write(0, mr, 0, size, remote, m);
        if (size <= inline) {
            send.inline();
        }
        while (s < n || c < n || r < n) {
            if (r < n && !(s == 0 && client)) {
                r++;
                byte expected = (byte) r;
                while (!arrived(pollAt, expected, spin)) {
                    if (stopped) {
                        return finishWriteLatency(size, s, prev - first);
                    }
                    Thread.onSpinWait();
                }
            }
            if (client && deadline != Long.MAX_VALUE && System.nanoTime() >= deadline) {
                break;
            }
            if (s < n) {
                long now = System.nanoTime();
                first = s == 0 ? now : first;
                prev = interval(s, prev, now);
                s++;
                BYTE.setVolatile(buf, (long) size - 1, (byte) s);
                post(qp, send);
            }
            while (c < s) {
                c += cq.pollNow();
            }
        }
        return finishWriteLatency(size, s, prev - first);
    }

    /** One look of write_lat's spin: whether the peer's byte arrived, between the spin's marks if any. */
    private boolean arrived(long pollAt, byte expected, InstructionMarks spin) {
        if (spin == null) {
            return (byte) BYTE.getVolatile(buf, pollAt) == expected;
        }
        spin.poll();
        boolean arrived = (byte) BYTE.getVolatile(buf, pollAt) == expected;
        if (!arrived) {
            spin.empty();
        }
        return arrived;
    }

    /**
     * Clears the buffer for the next run, before its barrier: every write of this side completed (the loop waits
     * for each), and the peer's last one was seen whole (its last byte lands last).
     */
    private Object finishWriteLatency(int size, long iterations, long elapsed) {
        buf.fill((byte) 0);
        return latencyRow(size, iterations, elapsed);
    }

    private Object oneSidedLatency(int size, long n, long deadline, boolean record) throws PerfException {
        QueuePair qp = qps[0];
        RemoteRegion remote = remotes[0];
        boolean atomic = p.test().verb() == PerfKind.Verb.ATOMIC;
        boolean cas = p.atomic() == PerfKind.AtomicOp.CMP_AND_SWAP;
        long s = 0;
        long first = 0;
        long prev = 0;
        send.clear();
        if (!atomic) {
            send.read(0, mr, 0, size, remote, m);
        } else if (cas) {
            send.compareAndSwap(0, mr, 0, remote, m, 0, 0);
        } else {
            send.fetchAndAdd(0, mr, 0, remote, m, 1);
        }
        while (s < n) {
            long now = System.nanoTime();
            if (now >= deadline) {
                break;
            }
            first = s == 0 ? now : first;
            prev = interval(s, prev, now);
            post(qp, send);
            s++;
            while (cq.poll() == 0) {
                Thread.onSpinWait();
            }
        }
        long end = System.nanoTime(); // after the last completion: one clock read an iteration, as perftest
        return latencyRow(size, s, end - first);
    }

    /**
     * A post of a latency loop at {@code now}: records the interval since the previous post {@code prev} (none
     * before the first, {@code s == 0}). The warm-up records too, into the histogram each run resets: otherwise the
     * histogram's code first ran in the measured loop, interpreted until the JIT compiled it there (seen with
     * -XX:+PrintCompilation: HdrHistogram's recordSingleValue and nine more compiled after the warm-up; under
     * --icount that compiling was 1,400-5,300 instructions an iteration of read_lat, different in every JVM).
     *
     * @return {@code now}, the next interval's start
     */
    private long interval(long s, long prev, long now) {
        if (s > 0) {
            histogram.recordValue(Math.min(now - prev, MAX_INTERVAL_NS));
        }
        return now;
    }

    private Object latencyRow(int size, long iterations, long elapsedNs) {
        loopEnded();
        return new RanLatency(size, iterations, elapsedNs);
    }

    /**
     * A latency run's figures before its row is made ({@link #row}): the histogram's percentiles are computed only
     * after the barrier that follows the run, so that one side's reckoning (HdrHistogram's iteration, code run once)
     * does not fall in the other side's measured window (--icount counts every vCPU; under C2 the server's row cost
     * 880 instructions an iteration of the client's write_lat window).
     */
    private record RanLatency(int size, long iterations, long elapsedNs) {
    }

    /**
     * The row of what {@link #run} returned: a latency run's is computed here from its histogram, which the next run
     * resets; any other row is returned as it is.
     *
     * @param ran what {@link #run} returned
     * @return the row, or null for a side that does not report
     */
    Object row(Object ran) {
        if (!(ran instanceof RanLatency l)) {
            return ran;
        }
        if (histogram.getTotalCount() == 0) {
            return new PerfResults.Latency(l.size(), l.iterations(), 0, 0, 0, 0, 0, 0, 0, 0);
        }
        return PerfResults.latency(histogram, p.test().rttFactor(), l.size(), l.iterations(), l.elapsedNs());
    }

    // ------------------------------------------------------------------ bandwidth

    private Object bandwidth(int size, long n, long deadline, boolean record) throws PerfException {
        int q = qps.length;
        int cqMod = p.cqMod();
        int depth = p.txDepth();
        boolean inl = size <= inline && p.test().verb() != PerfKind.Verb.READ;
        boolean stamps = posted != null; // in the warm-up too: the measured run then takes no path C2 has not seen
        for (int i = 0; i < q; i++) {
            scnt[i] = 0;
            ccnt[i] = 0;
            limit[i] = n;
            encode(signaled[i], i, size, inl);
            encode(unsignaled[i], i, size, inl).unsignaled();
        }
        long total = n == Long.MAX_VALUE ? Long.MAX_VALUE : n * q;
        long sent = 0;
        long done = 0;
        long start = System.nanoTime();
        long last = start;
        boolean ending = false;
        while (true) {
            if (!ending && deadline != Long.MAX_VALUE && System.nanoTime() >= deadline) {
                ending = true; // -D: finish each QP's run of requests up to its next signaled one
                total = 0;
                for (int i = 0; i < q; i++) {
                    limit[i] = (scnt[i] + cqMod - 1) / cqMod * cqMod;
                    total += limit[i];
                }
            }
            for (int i = 0; i < q; i++) {
                while (scnt[i] < limit[i] && scnt[i] - ccnt[i] < depth) {
                    long k = scnt[i];
                    SendBatch b = k % cqMod != cqMod - 1 && k != limit[i] - 1 ? unsignaled[i] : signaled[i];
                    b.setWrId(0, ((long) i << QP_SHIFT) | (k + 1));
                    if (stamps) {
                        posted[(int) sent] = System.nanoTime();
                    }
                    post(qps[i], b);
                    scnt[i]++;
                    sent++;
                }
            }
            if (sent >= total && done >= sent) {
                break;
            }
            int k = cq.poll();
            if (k > 0) {
                long now = System.nanoTime();
                for (int j = 0; j < k; j++) {
                    int i = (int) (cq.wrId[j] >>> QP_SHIFT);
                    long count = cq.wrId[j] & COUNT_MASK;
                    done += count - ccnt[i];
                    ccnt[i] = count;
                    if (stamps) {
                        completed[(int) done - 1] = now;
                    }
                }
                last = now;
            }
        }
        loopEnded();
        return PerfResults.bandwidth(stamps ? posted : null, completed, done, cqMod, size, last - start, p.gbits());
    }

    private Object sendBandwidthServer(int size, long n, boolean record) throws PerfException {
        long total = n == Long.MAX_VALUE ? Long.MAX_VALUE : n * qps.length;
        long got = 0;
        long start = System.nanoTime();
        long last = start;
        while (got < total) {
            int k = cq.poll();
            if (k == 0) {
                if (stopped) {
                    // the client saw every send acknowledged: what is still coming is already in the CQ
                    long until = System.nanoTime() + 50_000_000;
                    while (System.nanoTime() < until) {
                        k = cq.pollNow();
                        if (k > 0) {
                            break;
                        }
                    }
                    if (k == 0) {
                        break;
                    }
                } else {
                    continue;
                }
            }
            last = System.nanoTime();
            for (int j = 0; j < k; j++) {
                repost((int) cq.wrId[j]);
            }
            got += k;
        }
        loopEnded();
        return record ? PerfResults.bandwidth(null, null, got, p.cqMod(), size, last - start, p.gbits()) : null;
    }

    // ------------------------------------------------------------------ posting

    /** QP {@code i}'s bandwidth request of {@code size} bytes, encoded (signaled; wr_id set at each post). */
    private SendBatch encode(SendBatch b, int i, int size, boolean inl) {
        b.clear();
        switch (p.test().verb()) {
            case WRITE -> b.write(0, mr, 0, size, remotes[i], m);
            case READ -> b.read(0, mr, 0, size, remotes[i], m);
            default -> b.send(0, mr, 0, size);
        }
        return inl ? b.inline() : b;
    }

    private void post(QueuePair qp, SendBatch batch) throws PerfException {
        int rc = exs == null ? qp.tryPost(batch) : exs[indexOf(qp)].tryPost(batch);
        if (rc != 0) {
            throw new PerfException("Couldn't post send: errno " + rc);
        }
    }

    private int indexOf(QueuePair qp) {
        int i = 0;
        while (qps[i] != qp) {
            i++;
        }
        return i;
    }

    private void repost(int q) throws PerfException {
        int rc = qps[q].tryPost(recvs[q]);
        if (rc != 0) {
            throw new PerfException("Couldn't post receive: errno " + rc);
        }
    }

    @Override
    public void close() {
        send.close();
        for (SendBatch b : signaled) {
            b.close();
        }
        for (SendBatch b : unsignaled) {
            b.close();
        }
        for (ReceiveBatch b : recvs) {
            b.close();
        }
    }
}
