package dev.rdma4j.tools.perf;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
import java.io.EOFException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j net-pingpong}: the short path's round trip ({@link RdmaServer}, {@link RdmaClient},
 * {@link RdmaConnection}) measured as {@code ibv_rc_pingpong} measures the verbs': the client sends a message of
 * {@code -s} bytes, the server sends it back, {@code -n} times after {@code --warmup} unmeasured round trips; the
 * client says it connected, then prints rc_pingpong's two lines (bytes both ways, the mean time per round trip)
 * and the median round trip. With {@code --warmup-time}, rounds of {@value #WARMUP_ROUND} more round trips follow
 * the warm-up while the JIT of either side compiled during the last two rounds: after each, the client sends a
 * probe, a message of one byte, and the server answers with one of its own, {@code Q} when its JIT has been quiet
 * since the last probe ({@code W} otherwise). The server answers probes whenever {@code -s} is 2 or more. Both
 * sides collect their heaps ({@code System.gc()}) before the measured round trips (the server before each answer),
 * so that no collection of what the warm-up allocated falls among them: a young collection in some runs' windows
 * and not in others' moved their counts by up to 80% (when the short path still made ~1.8 KB a round trip; it
 * makes its two messages, ~150-200 B, now).
 * Blocking by default, as the README writes it ({@code send} then {@code receive} on the caller's thread);
 * {@code --async} chains {@code sendAsync} and {@code receiveAsync} on the engine thread, with no thread of the
 * caller's in the loop. {@code --busy-poll} sets {@link RdmaOptions.Builder#busyPoll} (the waiting caller polls), or with
 * {@code --async} gives the connection an engine in {@link PollingMode#BUSY_POLL} (give it to both sides).
 *
 * <p>Threading: one connection, driven from the command's thread (blocking) or the engine's (async).
 */
@Command(name = "net-pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "Round trips of the short path (RdmaServer, RdmaClient, RdmaConnection), measured like "
                + "ibv_rc_pingpong: without <host> serve one client, with <host> connect to it and measure.")
public final class NetPingpongCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "<host>", description = "the server to connect to (none: serve)")
    String host;

    @Option(names = {"-p", "--port"}, description = "listen on/connect to port <port> (default 18515)")
    int port = 18515;

    @Option(names = {"-s", "--size"}, description = "size of message to exchange (default 4096)")
    int size = 4096;

    @Option(names = {"-n", "--iters"}, description = "number of measured round trips (default 1000)")
    int iters = 1000;

    @Option(names = "--warmup", description = "unmeasured round trips before them (default 1000)")
    int warmup = 1000;

    @Option(names = "--warmup-time", paramLabel = "<sec>", description = "after --warmup, rounds of "
            + WARMUP_ROUND + " more while either side's JIT compiled during the last two rounds, for at most <sec> "
            + "seconds (default 0: none; needs -s 2 or more)")
    int warmupSeconds;

    /** Round trips of a warm-up round of {@code --warmup-time}. */
    static final int WARMUP_ROUND = 500;
    /**
     * Round trips of one call of the blocking loop in the warm-up: enough that its back-edge is the common case
     * (C2 then compiles the loop, not a trap for its second turn), few enough that the warm-up calls it thousands
     * of times (C2 compiles a method called 5,000 times, or more than 600 with 15,000 back-edges).
     */
    static final int WARMUP_CALL = 8;
    /** A probe's byte and the server's answers: quiet since the last probe, or still compiling. */
    private static final byte PROBE = 'P';
    private static final byte QUIET = 'Q';
    private static final byte COMPILING = 'W';

    @Option(names = "--async", description = "sendAsync and receiveAsync chained on the engine thread instead "
            + "of blocking send and receive")
    boolean async;

    @Option(names = "--busy-poll", description = "busy-poll the completion queue: the waiting caller "
            + "(RdmaOptions.busyPoll), or with --async the engine (PollingMode.BUSY_POLL)")
    boolean busyPoll;

    @Option(names = "--tcp", description = "exchange the endpoints over TCP instead of rdma_cm")
    boolean tcp;

    @Option(names = {"-d", "--ib-dev"}, description = "the device of --tcp (default: the first)")
    String device;

    @Option(names = "--connect-timeout", paramLabel = "<seconds>", description = "the client tries connecting again "
            + "until the server listens, for at most <seconds> (default 0: once)")
    int connectSeconds;

    @Option(names = "--icount-marks", paramLabel = "<lib.so>", description = "execute the instruction-count "
            + "marks of <lib.so> (scripts/lib/icount) around the measured round trips, on the client")
    Path icountMarks;

    @Override
    public Integer call() throws Exception {
        if (size < 1 || iters < 1 || warmup < 0 || warmupSeconds < 0) {
            throw new IllegalArgumentException("-s and -n must be at least 1, --warmup and --warmup-time at least 0");
        }
        if (warmupSeconds > 0 && size < 2) {
            throw new IllegalArgumentException("--warmup-time needs -s 2 or more (its probes are messages of one byte)");
        }
        InstructionMarks marks = icountMarks == null ? null : InstructionMarks.load(icountMarks);
        // --busy-poll: blocking calls poll while they wait (RdmaOptions.busyPoll); with --async nobody waits, and
        // the engine busy-polls instead (PollingMode.BUSY_POLL)
        try (CompletionEngine engine = async && busyPoll
                ? CompletionEngine.builder().mode(PollingMode.BUSY_POLL).name("net-pingpong").build() : null) {
            RdmaOptions options = RdmaOptions.builder().messageSize(size).busyPoll(busyPoll && !async)
                    .device(device).engine(engine)
                    .exchange(tcp ? RdmaOptions.Exchange.TCP : RdmaOptions.Exchange.RDMA_CM).build();
            run(options, marks);
        }
        return 0;
    }

    private void run(RdmaOptions options, InstructionMarks marks) throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (host == null) {
            try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(port), options);
                 RdmaConnection c = accept(server, options)) {
                long served = async ? serveAsync(c, size >= 2) : serve(c, size >= 2);
                out.println("served " + served + " round trips to " + c.peerAddress());
            }
        } else {
            try (RdmaConnection c = connect(new InetSocketAddress(host, port), options);
                 Arena arena = Arena.ofShared()) { // --async: the engine thread copies from it
                MemorySegment message = arena.allocate(size);
                long[] trips = new long[iters];
                out.println("connected to " + c.peerAddress() + ": " + warmup + " round trips of warm-up, then "
                        + iters + " measured");
                out.flush();
                measure(c, message, new long[warmup], null);
                if (warmupSeconds > 0) {
                    warmUpUntilQuiet(c, message, out);
                }
                WindowWatch watch = new WindowWatch();
                watch.before();
                long start = System.nanoTime();
                measure(c, message, trips, marks);
                long usec = (System.nanoTime() - start) / 1000;
                String disturbed = watch.after("client"); // this side's only: the server serves until the close
                if (disturbed != null && marks != null) { // said to the instrument only (scripts/perf-compare --icount)
                    out.println(disturbed);
                }
                long bytes = 2L * size * iters;
                out.printf("%d bytes in %.2f seconds = %.2f Mbit/sec%n", bytes, usec / 1e6, bytes * 8.0 / usec);
                out.printf("%d iters in %.2f seconds = %.2f usec/iter%n", iters, usec / 1e6, (double) usec / iters);
                Arrays.sort(trips);
                out.printf("median round trip %.2f usec%n", trips[iters / 2] / 1e3);
            }
        }
        out.flush();
    }

    /**
     * The first client that connects within ten times the options' timeout: a client that gave up while its
     * request was accepted (a JVM compiling in an emulator is slow) fails that accept, and the next is waited for.
     */
    private RdmaConnection accept(RdmaServer server, RdmaOptions options) throws Exception {
        long deadline = System.nanoTime() + options.timeout().multipliedBy(10).toNanos();
        for (;;) {
            try {
                return server.accept(java.time.Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (java.net.SocketTimeoutException e) {
                throw e;
            } catch (java.io.IOException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                spec.commandLine().getErr().println("net-pingpong: a client failed to connect (" + e.getMessage()
                        + "); waiting for the next");
            }
        }
    }

    /** Connects, trying again every 200 ms for {@code --connect-timeout} seconds while nobody listens. */
    private RdmaConnection connect(InetSocketAddress server, RdmaOptions options) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(connectSeconds);
        for (;;) {
            try {
                return RdmaClient.connect(server, options);
            } catch (java.io.IOException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    /**
     * Rounds of {@link #WARMUP_ROUND} round trips until neither side's JIT compiled for two rounds, or
     * {@code --warmup-time} is over; a line about it, in {@code rdma4j perf}'s words.
     */
    private void warmUpUntilQuiet(RdmaConnection c, MemorySegment message, PrintWriter out) throws Exception {
        JitWatch jit = new JitWatch(true);
        jit.compiledSinceLastLook(); // the baseline
        MemorySegment probe = Arena.ofAuto().allocate(1);
        probe.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, PROBE);
        probe(c, probe); // the server's baseline
        long start = System.nanoTime();
        long limit = java.util.concurrent.TimeUnit.SECONDS.toNanos(warmupSeconds);
        long[] trips = new long[WARMUP_ROUND];
        int rounds = 0;
        int quiet = 0;
        while (quiet < 2 && System.nanoTime() - start < limit) {
            measure(c, message, trips, null);
            rounds++;
            boolean theirs = probe(c, probe) == QUIET;
            quiet = !jit.compiledSinceLastLook() && theirs ? quiet + 1 : 0;
        }
        System.gc(); // the server collected before its last answer
        out.printf("# warm-up: %d round trips of %d bytes in %d rounds after %d, %.1f s, %s; not counted%n",
                (long) rounds * WARMUP_ROUND, size, rounds, warmup, (System.nanoTime() - start) / 1e9,
                quiet >= 2 ? "until neither side's JIT compiled for two rounds"
                        : "stopped at --warmup-time with a JIT still compiling");
        out.flush();
    }

    /** Sends the probe and returns the server's answer. */
    private static byte probe(RdmaConnection c, MemorySegment probe) throws Exception {
        c.send(probe);
        try (Message m = c.receive()) {
            if (m.data().byteSize() != 1) {
                throw new IllegalStateException("net-pingpong: the server answered a warm-up probe with "
                        + m.data().byteSize() + " bytes: is it an older rdma4j, or run with -s 1?");
            }
            return m.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
        }
    }

    /**
     * The server's answer to a probe: whether its JIT compiled since the last one, after collecting its heap (the
     * measurement may begin once the client has it).
     */
    private static MemorySegment answer(JitWatch jit, MemorySegment answer) {
        System.gc();
        answer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, jit.compiledSinceLastLook() ? COMPILING : QUIET);
        return answer;
    }

    /**
     * Round trips, each one's nanoseconds into {@code trips}, between the marks if any. Unmarked (the warm-up), the
     * blocking loop runs in calls of {@link #WARMUP_CALL} round trips, so that the JIT compiles {@link #roundTrips}
     * as a whole method (thousands of calls) and the measured call runs compiled from its first round trip. Called
     * once for all of them, its loop would be compiled only on the stack (OSR), and each new call would run in the
     * interpreter until the interpreter's back-edge counter next overflows (every 1,024 back-edges under C2's
     * thresholds): up to the whole of a 1,000-round-trip window, a different share in each JVM.
     */
    private void measure(RdmaConnection c, MemorySegment message, long[] trips, InstructionMarks marks)
            throws Exception {
        if (marks != null) {
            marks.start();
        }
        if (async) {
            new AsyncClient(c, message, trips).run().join();
        } else if (marks != null) {
            roundTrips(c, message, trips, 0, trips.length);
        } else {
            for (int i = 0; i < trips.length; i += WARMUP_CALL) {
                roundTrips(c, message, trips, i, Math.min(trips.length, i + WARMUP_CALL));
            }
        }
        if (marks != null) {
            marks.stop();
        }
    }

    /** Blocking round trips {@code from} to {@code to}, each one's nanoseconds into {@code trips}. */
    private static void roundTrips(RdmaConnection c, MemorySegment message, long[] trips, int from, int to)
            throws Exception {
        for (int i = from; i < to; i++) {
            long t = System.nanoTime();
            c.send(message);
            c.receive().close();
            trips[i] = System.nanoTime() - t;
        }
    }

    /** Sends every message back until the client closes (a probe is answered instead, if {@code probes}): the count. */
    private static long serve(RdmaConnection c, boolean probes) throws Exception {
        long n = 0;
        JitWatch jit = new JitWatch(true);
        MemorySegment answer = Arena.ofAuto().allocate(1);
        try {
            for (;;) {
                try (Message m = c.receive()) {
                    MemorySegment d = m.data();
                    c.send(probes && d.byteSize() == 1 ? answer(jit, answer) : d);
                }
                n++;
            }
        } catch (EOFException clientLeft) {
            return n;
        }
    }

    /** {@link #serve} with futures: each receive's continuation sends the message back and waits for the next. */
    private static long serveAsync(RdmaConnection c, boolean probes) throws Exception {
        CompletableFuture<Long> done = new CompletableFuture<>();
        // on the engine's thread: the compilation time only, no files read there
        Probes answers = probes ? new Probes(new JitWatch(false), Arena.ofAuto().allocate(1)) : null;
        long[] n = {0};
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            // a loop while messages are already waiting (their futures complete at once), not a recursion
            for (;;) {
                CompletableFuture<Message> r = c.receiveAsync();
                if (!r.isDone()) {
                    r.whenComplete((m, e) -> {
                        if (echo(c, m, e, n, done, answers)) {
                            next[0].run();
                        }
                    });
                    return;
                }
                boolean failed = r.isCompletedExceptionally();
                if (!echo(c, failed ? null : r.resultNow(), failed ? r.exceptionNow() : null, n, done, answers)) {
                    return;
                }
            }
        };
        next[0].run();
        try {
            return done.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    /** The async server's answers to probes: its JIT's watch and the answer's buffer. */
    private record Probes(JitWatch jit, MemorySegment answer) {
    }

    private static boolean echo(RdmaConnection c, Message m, Throwable e, long[] n, CompletableFuture<Long> done,
            Probes probes) {
        if (e != null) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof EOFException) {
                done.complete(n[0]);
            } else {
                done.completeExceptionally(cause);
            }
            return false;
        }
        try (m) {
            MemorySegment d = m.data();
            c.sendAsync(probes != null && d.byteSize() == 1 ? answer(probes.jit(), probes.answer()) : d)
                    .whenComplete((v, x) -> {
                        if (x != null) {
                            done.completeExceptionally(x);
                        }
                    });
        } catch (RuntimeException x) {
            done.completeExceptionally(x);
            return false;
        }
        n[0]++;
        return true;
    }

    /** The client's round trips with futures, each started by the previous one's receive continuation. */
    private static final class AsyncClient {
        private final RdmaConnection c;
        private final MemorySegment message;
        private final long[] trips;
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private int i;
        private long t;

        AsyncClient(RdmaConnection c, MemorySegment message, long[] trips) {
            this.c = c;
            this.message = message;
            this.trips = trips;
        }

        CompletableFuture<Void> run() {
            step();
            return done;
        }

        private void step() {
            for (;;) { // a loop while replies are already waiting, not a recursion
                if (i == trips.length) {
                    done.complete(null);
                    return;
                }
                t = System.nanoTime();
                CompletableFuture<Message> reply;
                try {
                    c.sendAsync(message).whenComplete((v, x) -> {
                        if (x != null) {
                            done.completeExceptionally(x);
                        }
                    });
                    reply = c.receiveAsync();
                } catch (RuntimeException x) {
                    done.completeExceptionally(x);
                    return;
                }
                if (!reply.isDone()) {
                    reply.whenComplete((m, e) -> {
                        if (took(m, e)) {
                            step();
                        }
                    });
                    return;
                }
                boolean failed = reply.isCompletedExceptionally();
                if (!took(failed ? null : reply.resultNow(), failed ? reply.exceptionNow() : null)) {
                    return;
                }
            }
        }

        private boolean took(Message m, Throwable e) {
            if (e != null) {
                done.completeExceptionally(e);
                return false;
            }
            m.close();
            trips[i++] = System.nanoTime() - t;
            return true;
        }
    }
}
