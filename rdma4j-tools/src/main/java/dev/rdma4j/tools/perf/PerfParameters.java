package dev.rdma4j.tools.perf;

import dev.rdma4j.engine.PollingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The resolved parameters of one {@code rdma4j perf} run: the options after defaults and checks.
 *
 * @param test       the test
 * @param host       the server to connect to, or {@code null} on the server
 * @param device     {@code -d}, or {@code null} for the first device
 * @param ibPort     {@code -i}
 * @param gidIndex   {@code -x}, or -1 for the port's best RoCE GID (none on InfiniBand)
 * @param tcpPort    {@code -p}
 * @param sizes      the message sizes, in order ({@code -s}, or every power of two with {@code -a})
 * @param iterations measured iterations per size ({@code -n}); 0 with a duration
 * @param duration   {@code -D} seconds, or 0 to run {@code iterations}
 * @param qps        {@code -q} queue pairs (bandwidth tests)
 * @param txDepth    {@code -t} send requests outstanding per QP
 * @param rxDepth    receives kept posted (send tests)
 * @param inline     {@code -I}: messages up to this size are sent inline
 * @param warmup     {@code --warmup}: iterations of one warm-up round before the first size's measurement, not
 *                   counted
 * @param warmupSeconds {@code --warmup-time}: rounds repeat while a side's JIT compiler is still at work, up to
 *                   this many seconds; 0 runs one round
 * @param connectSeconds {@code --connect-timeout}: how long the client retries connecting while the server is not
 *                   listening yet; 0 tries once
 * @param atomic     {@code -A} (atomic tests)
 * @param mode       how completions are waited for: {@code null} to busy-poll the CQ in the measuring thread,
 *                   else through a {@code CompletionEngine} in this mode ({@code -e} is {@code EVENT})
 * @param gbits      {@code --report_gbits}
 * @param json       {@code --json} file, or {@code null}
 * @param plot       {@code --plot} file, or {@code null}
 * @param byteBudget the bytes one size of {@code -a} moves at most, or 0 for {@link #iterations()} at every size
 * @param icountMarks {@code --icount-marks}: the library whose marks the client executes around each measured
 *                   size, and both sides around each look of a spin on memory (see {@link InstructionMarks}), or
 *                   {@code null}
 * @param wrApi       {@code --wr-api}: sends posted through the extended API ({@code ibv_wr_*}, {@code QueuePairEx})
 */
public record PerfParameters(PerfKind test, String host, String device, int ibPort, int gidIndex, int tcpPort,
        List<Long> sizes, long iterations, int duration, int qps, int txDepth, int rxDepth, int inline, long warmup,
        int warmupSeconds, int connectSeconds, PerfKind.AtomicOp atomic, PollingMode mode, boolean gbits, Path json, Path plot, long byteBudget,
        Path icountMarks, boolean wrApi) {

    /**
     * The bytes one size of {@code -a} moves at most when {@code -n} is not given: perftest runs its 5000
     * iterations at every size, 40 GB at 8 MiB, which an emulated device (about 20 MB/s) needs hours for.
     */
    public static final long ALL_SIZES_BUDGET = 64L << 20;
    /** The fewest iterations a size of {@code -a} runs under the budget. */
    public static final long ALL_SIZES_MIN_ITERATIONS = 100;

    /**
     * The iterations of {@code size}: {@link #iterations()}, or under a byte budget (as {@code -a} without
     * {@code -n} sets) as many as the budget holds, at least {@link #ALL_SIZES_MIN_ITERATIONS}. The tables show
     * the number run.
     *
     * @param size the message size
     * @return the iterations
     */
    public long iterationsFor(long size) {
        if (byteBudget <= 0) {
            return iterations;
        }
        return Math.min(iterations, Math.max(ALL_SIZES_MIN_ITERATIONS, byteBudget / Math.max(1, size)));
    }

    /** perftest's largest size of {@code -a} ({@code MAX_SIZE}: 8 MiB). */
    public static final long MAX_ALL_SIZE = 1L << 23;
    /** The largest single message size this tool takes. */
    public static final long MAX_SIZE = 1L << 30;
    /** perftest's CQ moderation ({@code DEF_CQ_MOD}): bandwidth tests ask for a completion every this many sends. */
    public static final int CQ_MOD = 100;

    /** Validates and copies. */
    public PerfParameters {
        sizes = List.copyOf(sizes);
    }

    /**
     * Every power of two from 2 up to {@code max}, as {@code -a} runs them.
     *
     * @param max the largest (at most {@link #MAX_ALL_SIZE})
     * @return the sizes
     */
    public static List<Long> allSizes(long max) {
        List<Long> s = new ArrayList<>();
        for (long v = 2; v <= max; v <<= 1) {
            s.add(v);
        }
        return s;
    }

    /**
     * These parameters for the client of a server on this machine ({@code --loopback}).
     *
     * @param server         the server's address
     * @param connectSeconds how long to retry connecting while the server starts
     * @return the client's parameters; everything else as given
     */
    public PerfParameters asClientOf(String server, int connectSeconds) {
        return new PerfParameters(test, server, device, ibPort, gidIndex, tcpPort, sizes, iterations, duration, qps,
                txDepth, rxDepth, inline, warmup, warmupSeconds, connectSeconds, atomic, mode, gbits, json, plot,
                byteBudget, icountMarks, wrApi);
    }

    /**
     * Whether this side is the client.
     *
     * @return a host was given
     */
    public boolean isClient() {
        return host != null;
    }

    /**
     * The largest message size.
     *
     * @return bytes
     */
    public long maxSize() {
        return sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    /**
     * The CQ moderation of bandwidth tests: perftest's 100, at most the send queue depth.
     *
     * @return signal every this many sends
     */
    public int cqMod() {
        return Math.min(CQ_MOD, txDepth);
    }

    /**
     * What both sides must agree on, as one line sent to the peer before the endpoints: the test and
     * everything that decides how many messages of which size go which way.
     *
     * @return the line
     */
    public String agreement() {
        String s = sizes.size() == 1 ? Long.toString(sizes.getFirst())
                : sizes.getFirst() + ".." + sizes.getLast();
        return String.format(Locale.ROOT, "%s -s %s -n %d -D %d -q %d -t %d -r %d --warmup %d%s", test.cliName(), s,
                iterations, duration, qps, txDepth, rxDepth, warmup,
                test.verb() == PerfKind.Verb.ATOMIC ? " -A " + atomic : "");
    }

    /**
     * How completions are waited for, as the banner says it.
     *
     * @return e.g. "busy polling the CQ" or "CompletionEngine EVENT"
     */
    public String completionMode() {
        return mode == null ? "busy polling the CQ" : "CompletionEngine " + mode
                + (test == PerfKind.SEND_LAT && duration == 0 ? " (the loop runs in its completion handler)" : "");
    }
}
