package dev.rdma4j.tools.perf;

import dev.rdma4j.engine.PollingMode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j perf TEST [options] [server]}: perftest's {@code ib_send_lat}, {@code ib_send_bw},
 * {@code ib_write_lat}, {@code ib_write_bw}, {@code ib_read_lat}, {@code ib_read_bw} and {@code ib_atomic_lat} on
 * rdma4j, with their main flags and their tables. Both sides are rdma4j: without a server address it is the
 * server, with one the client; they agree on the parameters and exchange endpoints and regions over TCP
 * ({@link dev.rdma4j.connect.EndpointExchange}).
 */
@Command(name = "perf", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
        description = {"RDMA performance tests like perftest's ib_* tools: TEST is send_lat, send_bw, write_lat, "
                + "write_bw, read_lat, read_bw or atomic_lat. Without <server> start a server and wait for the "
                + "client; with <server> connect to it. Both sides take the same options. With --loopback (and "
                + "always in the Soft-RoCE guest that bin/rdma4j boots on a host without a device, where no "
                + "client could reach a server) both sides run here.",
                "Latency is half a round trip for send and write (ping-pong), a full one for read and atomic; "
                        + "bandwidth counts payload bytes (MB = 2^20 bytes)."})
public final class PerfCommand implements Callable<Integer> {
    /** {@code --mode}: the completion engine's polling mode. */
    enum Mode {
        BUSY(PollingMode.BUSY_POLL), ADAPTIVE(PollingMode.ADAPTIVE), EVENT(PollingMode.EVENT);

        final PollingMode polling;

        Mode(PollingMode polling) {
            this.polling = polling;
        }
    }

    /** {@code --mode} in any case, whatever the command line's settings. */
    static final class ModeConverter implements CommandLine.ITypeConverter<Mode> {
        @Override
        public Mode convert(String value) {
            return Mode.valueOf(value.toUpperCase(java.util.Locale.ROOT));
        }
    }

    /** {@code -A} in any case. */
    static final class AtomicConverter implements CommandLine.ITypeConverter<PerfKind.AtomicOp> {
        @Override
        public PerfKind.AtomicOp convert(String value) {
            return PerfKind.AtomicOp.valueOf(value.toUpperCase(java.util.Locale.ROOT));
        }
    }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TEST", description = "send_lat, send_bw, write_lat, write_bw, read_lat, "
            + "read_bw or atomic_lat")
    String test;

    @Parameters(index = "1", arity = "0..1", paramLabel = "<server>",
            description = "the server's address; without it, start a server and wait for the client")
    String host;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>", description = "use IB device <dev> (default first "
            + "device found)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "<port>", defaultValue = "1",
            description = "use port <port> of IB device (default 1)")
    int ibPort;

    @Option(names = {"-x", "--gid-index"}, paramLabel = "<index>", defaultValue = "-1",
            description = "test uses GID with GID index (default: the port's best RoCE GID; none on IB)")
    int gidIndex;

    @Option(names = {"-p", "--port"}, paramLabel = "<port>", defaultValue = "18515",
            description = "listen on/connect to TCP port <port> (default 18515)")
    int tcpPort;

    @Option(names = {"-s", "--size"}, paramLabel = "<size>",
            description = "size of message to exchange (default 2 for latency, 65536 for bandwidth, 8 for atomics)")
    Long size;

    @Option(names = {"-n", "--iters"}, paramLabel = "<iters>",
            description = "number of exchanges (default 1000 for latency, 5000 for bandwidth)")
    Long iters;

    @Option(names = {"-a", "--all"}, description = "run sizes from 2 till 2^23 (without -n: at"
            + " most 64 MiB per size, at least 100 iterations; the table shows the number run)")
    boolean all;

    @Option(names = "--max-size", paramLabel = "<size>", defaultValue = "8388608",
            description = "with -a, stop at this size (default 2^23, perftest's largest)")
    long maxSize;

    @Option(names = {"-D", "--duration"}, paramLabel = "<sec>",
            description = "run the test for <sec> seconds instead of a number of iterations")
    Integer duration;

    @Option(names = {"-e", "--events"}, description = "sleep on CQ events: rdma4j's CompletionEngine in EVENT mode "
            + "(default: busy-poll the CQ); same as --mode=event")
    boolean events;

    @Option(names = "--mode", paramLabel = "busy|adaptive|event", converter = ModeConverter.class, description = "wait for completions through a "
            + "CompletionEngine in this polling mode (default: busy-poll the CQ in the measuring thread)")
    Mode mode;

    @Option(names = {"-q", "--qp"}, paramLabel = "<num>", defaultValue = "1",
            description = "number of QPs (bandwidth tests; default 1)")
    int qps;

    @Option(names = {"-t", "--tx-depth"}, paramLabel = "<dep>",
            description = "size of the send queue (default 1 for latency, 128 for bandwidth)")
    Integer txDepth;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "<dep>", defaultValue = "512",
            description = "receives kept posted in send tests (default 512)")
    int rxDepth;

    @Option(names = {"-I", "--inline_size"}, paramLabel = "<size>",
            description = "max size of message to be sent inline (default 236 send_lat, 220 write_lat, else 0)")
    Integer inline;

    @Option(names = {"-A", "--atomic_type"}, paramLabel = "CMP_AND_SWAP|FETCH_AND_ADD",
            defaultValue = "FETCH_AND_ADD", converter = AtomicConverter.class,
            description = "type of atomic operation (default FETCH_AND_ADD)")
    PerfKind.AtomicOp atomic;

    @Option(names = {"-F", "--CPU-freq"}, description = "accepted for perftest's sake, no effect (the tool measures "
            + "with System.nanoTime, not CPU cycles)")
    boolean cpuFreq;

    @Option(names = "--report_gbits", description = "report bandwidth in Gb/sec instead of MB/sec")
    boolean gbits;

    @Option(names = "--warmup", paramLabel = "<iters>", defaultValue = "" + DEFAULT_WARMUP,
            description = "iterations of a warm-up round, run before measuring and not counted (default "
                    + DEFAULT_WARMUP + "); rounds repeat while either side's JIT compiler is at work, see --warmup-time")
    long warmup;

    @Option(names = "--warmup-time", paramLabel = "<sec>", defaultValue = "" + DEFAULT_WARMUP_SECONDS,
            description = "repeat warm-up rounds until neither side's JIT compiled anything for two rounds, for at "
                    + "most <sec> seconds (default " + DEFAULT_WARMUP_SECONDS + "); 0: one round")
    int warmupSeconds;

    @Option(names = "--connect-timeout", paramLabel = "<sec>", defaultValue = "" + DEFAULT_CONNECT_SECONDS,
            description = "the client retries connecting for up to <sec> seconds while the server is not listening "
                    + "yet (default " + DEFAULT_CONNECT_SECONDS + "), so both sides may be started at once")
    int connectSeconds;

    @Option(names = "--loopback", description = "run both sides on this machine: the server in a child JVM, this "
            + "process its client over 127.0.0.1, which prints the results (the default in the Soft-RoCE guest "
            + "that bin/rdma4j boots for a host without an RDMA device)")
    boolean loopback;

    @Option(names = "--json", paramLabel = "<file>", description = "write the results to <file> as JSON")
    Path json;

    @Option(names = "--plot", paramLabel = "<file.png>", description = "draw t_typical (latency) or BW average "
            + "(bandwidth) against the message size into a PNG")
    Path plot;

    @Option(names = "--icount-marks", paramLabel = "<lib.so>", description = "execute the instruction-count marks "
            + "of <lib.so> (scripts/lib/icount) around each measured size, on the client (and around each look of "
            + "write_lat's spin on memory, on both sides): scripts/perf-compare --icount counts the guest's "
            + "instructions between them, busy waiting left out")
    Path icountMarks;

    @Option(names = "--wr-api", description = "post sends through the extended API (ibv_create_qp_ex, ibv_wr_start"
            + " ... ibv_wr_complete: QueuePairEx) instead of ibv_post_send, as perftest's bandwidth tests do where"
            + " rdma-core has it")
    boolean wrApi;

    /** Iterations of a warm-up round by default. */
    static final long DEFAULT_WARMUP = 1000;
    /**
     * The longest warm-up by default: the guest's emulated CPUs need tens of seconds for C2 to compile the loops
     * of both sides (measured: 10-40 s); a host needs well under one.
     */
    static final int DEFAULT_WARMUP_SECONDS = 120;
    /** Set by bin/rdma4j in the guest it boots for a host without a device: perf then runs both sides there. */
    static final String AUTO_GUEST_ENV = "RDMA4J_AUTO_GUEST";
    /** How long a client retries connecting by default. */
    static final int DEFAULT_CONNECT_SECONDS = 10;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        PerfParameters p = parameters();
        try {
            if (!p.isClient() && (loopback || System.getenv(AUTO_GUEST_ENV) != null)) {
                if (!loopback) {
                    out.println("# no RDMA device on the host: both sides run in this Soft-RoCE guest (--loopback)");
                }
                return PerfLoopback.run(p, PerfLoopback.afterCommand(spec.commandLine().getParseResult().originalArgs()),
                        out, err);
            }
            new PerfRun(p, out).run();
            return 0;
        } catch (PerfException e) {
            out.flush();
            err.println("perf " + p.test().cliName() + ": " + e.getMessage());
            if (System.getenv("RDMA4J_DEBUG") != null) {
                e.printStackTrace(err);
            }
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * Resolves and checks the options, as perftest does before it opens the device.
     *
     * @return the parameters
     * @throws ParameterException for a usage error (picocli prints it with the usage, exit status 1)
     */
    PerfParameters parameters() {
        PerfKind t;
        try {
            t = PerfKind.of(test);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        boolean atomicTest = t.verb() == PerfKind.Verb.ATOMIC;
        if (duration != null && (all || iters != null)) {
            throw usage("-D cannot be combined with " + (all ? "-a" : "-n"));
        }
        if (duration != null && duration <= 0) {
            throw usage("-D must be at least 1 second");
        }
        if (all && size != null) {
            throw usage("-a and -s cannot be combined");
        }
        List<Long> sizes;
        if (atomicTest) {
            if (size != null && size != 8) {
                throw usage("atomic operations are 8 bytes: -s 8 or none");
            }
            sizes = List.of(8L); // as perftest, -a runs the one size
        } else if (all) {
            if (maxSize < 2 || maxSize > PerfParameters.MAX_ALL_SIZE) {
                throw usage("--max-size must be in 2.." + PerfParameters.MAX_ALL_SIZE);
            }
            sizes = PerfParameters.allSizes(maxSize);
        } else {
            long s = size != null ? size : t.defaultSize();
            if (s < 1 || s > PerfParameters.MAX_SIZE) {
                throw usage("-s must be in 1.." + PerfParameters.MAX_SIZE);
            }
            sizes = List.of(s);
        }
        long n = duration != null ? 0 : iters != null ? iters : t.defaultIterations();
        if (duration == null && (n < (t.isLatency() ? 2 : 1) || n > 100_000_000)) {
            throw usage("-n must be in " + (t.isLatency() ? 2 : 1) + "..100000000");
        }
        if (qps < 1 || qps > 1024) {
            throw usage("-q must be in 1..1024");
        }
        if (t.isLatency() && qps != 1) {
            throw usage("-q is for bandwidth tests: latency tests use one QP");
        }
        int tx = txDepth != null ? txDepth : t.defaultTxDepth();
        if (tx < 1 || tx > 16384) {
            throw usage("-t must be in 1..16384");
        }
        if (rxDepth < 1 || rxDepth > 16384) {
            throw usage("-r must be in 1..16384");
        }
        int inl = inline != null ? inline : t.defaultInline();
        if (inl < 0 || inl > 1024) {
            throw usage("-I must be in 0..1024");
        }
        if (warmup < 0) {
            throw usage("--warmup must be at least 0");
        }
        if (warmupSeconds < 0 || warmupSeconds > 3600) {
            throw usage("--warmup-time must be in 0..3600");
        }
        if (loopback && host != null) {
            throw usage("--loopback runs the server itself: give no <server>");
        }
        if (connectSeconds < 0 || connectSeconds > 3600) {
            throw usage("--connect-timeout must be in 0..3600");
        }
        if (ibPort < 1 || ibPort > 255) {
            throw usage("-i must be in 1..255");
        }
        if (tcpPort < 1 || tcpPort > 65535) {
            throw usage("-p must be in 1..65535");
        }
        if (events && mode != null && mode != Mode.EVENT) {
            throw usage("-e is --mode=event: it cannot be combined with --mode=" + mode.name().toLowerCase());
        }
        PollingMode polling = events ? PollingMode.EVENT : mode == null ? null : mode.polling;
        return new PerfParameters(t, host, device, ibPort, gidIndex, tcpPort, sizes, n, duration == null ? 0 : duration,
                qps, tx, rxDepth, inl, warmup, warmupSeconds, connectSeconds, atomic, polling, gbits, json, plot,
                all && iters == null && duration == null ? PerfParameters.ALL_SIZES_BUDGET : 0, icountMarks, wrApi);
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
