package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code rdma4j srq-pingpong} against rdma-core's {@code ibv_srq_pingpong} on the same device, in both
 * roles, with several QP counts and with and without {@code -e}, and against itself. The Java side runs
 * in this JVM, the C side as a process; the client starts once the server's TCP port is in LISTEN state.
 */
@Tag("device")
class SrqPingpongInteropDeviceTest {
    private static final Duration DEADLINE = Duration.ofSeconds(150);
    private static final Pattern ADDRESS = Pattern.compile(
            "  (local address: |remote address:) LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\\S+)");
    /** A daemon per run, so that a run stuck past its deadline cannot keep the test JVM alive. */
    private static final ExecutorService JAVA_RUNS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "srq-pingpong-java");
        t.setDaemon(true);
        return t;
    });
    private static String device;
    private static String gid;

    @TempDir
    Path dir;

    /** One tool's run: its exit status and output. */
    record Run(String who, int status, List<String> out, String err) {
        @Override
        public String toString() {
            return who + " exited " + status + "\n--- stdout\n" + String.join("\n", out) + "\n--- stderr\n" + err;
        }
    }

    /** Which implementation plays a role. */
    private enum Impl {
        JAVA, C
    }

    @BeforeAll
    static void device() throws Exception {
        device = Device.byNameOrDefault(null).name();
        try (Context ctx = Context.open(device)) {
            gid = ctx.queryGid(1, 1).gid().toString();
        }
    }

    @AfterAll
    static void stop() {
        JAVA_RUNS.shutdownNow();
    }

    @Test
    void javaServerCClientEightQps() throws Exception {
        pair(18701, Impl.JAVA, List.of(), Impl.C, List.of(), 8, "-n", "120");
    }

    @Test
    void cServerJavaClientEightQps() throws Exception {
        pair(18702, Impl.C, List.of(), Impl.JAVA, List.of(), 8, "-n", "120");
    }

    @Test
    void javaServerCClientOneQpWithValidation() throws Exception {
        pair(18703, Impl.JAVA, List.of(), Impl.C, List.of(), 1, "-n", "100", "-s", "9000", "-c");
    }

    /** The default: 16 QPs. */
    @Test
    void cServerJavaClientDefaultQps() throws Exception {
        pair(18704, Impl.C, List.of(), Impl.JAVA, List.of(), 16, "-n", "160", "-s", "2000");
    }

    @Test
    void javaServerJavaClientSmallReceiveDepth() throws Exception {
        pair(18705, Impl.JAVA, List.of(), Impl.JAVA, List.of(), 4, "-n", "100", "-r", "8", "-s", "100");
    }

    @Test
    void eventsJavaServerCClient() throws Exception {
        pair(18706, Impl.JAVA, List.of("-e"), Impl.C, List.of("-e"), 8, "-n", "120");
    }

    @Test
    void eventsCServerJavaClient() throws Exception {
        pair(18707, Impl.C, List.of("-e"), Impl.JAVA, List.of("-e"), 4, "-n", "100", "-c");
    }

    @Test
    void eventsJavaServerPollingJavaClient() throws Exception {
        pair(18708, Impl.JAVA, List.of("-e"), Impl.JAVA, List.of(), 16, "-n", "100", "-s", "512");
    }

    // ------------------------------------------------------------------ the harness

    /**
     * Runs a server and a client with {@code -q numQp} and the same options (plus each side's own), and
     * checks both outputs and how they fit together.
     */
    private void pair(int port, Impl serverImpl, List<String> serverOnly, Impl clientImpl, List<String> clientOnly,
            int numQp, String... options) throws Exception {
        List<String> opts = new ArrayList<>(List.of("-q", Integer.toString(numQp)));
        opts.addAll(List.of(options));
        long size = opts.contains("-s") ? Long.parseLong(value(opts, "-s")) : 4096;
        long iters = Long.parseLong(value(opts, "-n"));
        List<String> serverOpts = new ArrayList<>(serverOnly);
        serverOpts.addAll(opts);
        List<String> clientOpts = new ArrayList<>(clientOnly);
        clientOpts.addAll(opts);
        CompletableFuture<Run> server = start(serverImpl, port, serverOpts, false);
        awaitListening(port, server);
        Run client = finish(start(clientImpl, port, clientOpts, true));
        Run s = finish(server);
        for (Run r : List.of(s, client)) {
            assertThat(r.status()).as("%s", r).isZero();
            assertThat(r.err()).as("%s", r).isEmpty();
            assertThat(r.out()).as("%s: no \"invalid data\" lines, also with -c", r).hasSize(2 * numQp + 2);
            for (int i = 0; i < 2 * numQp; i++) {
                assertThat(r.out().get(i)).as("%s", r).matches(ADDRESS)
                        .startsWith(i < numQp ? "  local address:  " : "  remote address: ");
                assertThat(field(r, i, 5)).as("%s", r).isEqualTo(gid);
            }
            assertThat(r.out().get(2 * numQp)).as("%s", r)
                    .matches(size * iters * 2 + " bytes in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d Mbit/sec");
            assertThat(r.out().get(2 * numQp + 1)).as("%s", r)
                    .matches(iters + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d usec/iter");
        }
        // each side's remote address i is the other's local address i
        for (int i = 0; i < numQp; i++) {
            for (int f = 2; f <= 4; f++) {
                assertThat(field(s, numQp + i, f)).as("server's remote vs client's local\n%s\n%s", s, client)
                        .isEqualTo(field(client, i, f));
                assertThat(field(client, numQp + i, f)).as("client's remote vs server's local\n%s\n%s", s, client)
                        .isEqualTo(field(s, i, f));
            }
        }
        if (serverImpl != clientImpl) { // the same line formats, numbers aside
            assertThat(s.out().stream().map(SrqPingpongInteropDeviceTest::shape).toList())
                    .isEqualTo(client.out().stream().map(SrqPingpongInteropDeviceTest::shape).toList());
        }
    }

    private static String field(Run r, int line, int group) {
        Matcher m = ADDRESS.matcher(r.out().get(line));
        assertThat(m.matches()).as("%s", r).isTrue();
        return m.group(group);
    }

    /** A line with its variable numbers masked. */
    private static String shape(String line) {
        return line.replaceAll("0x[0-9a-f]+", "0x#").replaceAll("\\d+\\.\\d\\d", "#.##")
                .replace("local address:  ", "ADDRESS:").replace("remote address: ", "ADDRESS:");
    }

    private static String value(List<String> opts, String flag) {
        return opts.get(opts.indexOf(flag) + 1);
    }

    private CompletableFuture<Run> start(Impl impl, int port, List<String> options, boolean client)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("-d", device, "-g", "1", "-p", Integer.toString(port)));
        args.addAll(options);
        if (client) {
            args.add("127.0.0.1");
        }
        String who = (impl == Impl.JAVA ? "rdma4j srq-pingpong " : "ibv_srq_pingpong ") + String.join(" ", args);
        if (impl == Impl.JAVA) {
            List<String> full = new ArrayList<>(List.of("srq-pingpong"));
            full.addAll(args);
            return CompletableFuture.supplyAsync(() -> {
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                int status = new CommandLine(Main.class).setOut(new PrintWriter(out, true))
                        .setErr(new PrintWriter(err, true)).execute(full.toArray(String[]::new));
                return new Run(who, status, out.toString().lines().toList(), err.toString());
            }, JAVA_RUNS);
        }
        List<String> cmd = new ArrayList<>(List.of("ibv_srq_pingpong"));
        cmd.addAll(args);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        return p.onExit().thenApply(done -> {
            try {
                return new Run(who, done.exitValue(), Files.readAllLines(out), Files.readString(err));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).orTimeout(DEADLINE.toSeconds(), TimeUnit.SECONDS).whenComplete((r, e) -> {
            if (e != null) {
                p.destroyForcibly();
            }
        });
    }

    private static Run finish(CompletableFuture<Run> run) throws Exception {
        try {
            return run.get(DEADLINE.toSeconds() + 10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            run.cancel(true);
            return fail("no result within " + DEADLINE);
        }
    }

    /**
     * Waits until something listens on TCP {@code port} (read from /proc/net/tcp and tcp6, so the
     * server's single accept is not spent on a probe), or the server has already ended.
     */
    private static void awaitListening(int port, CompletableFuture<Run> server) throws Exception {
        String local = String.format(Locale.ROOT, ":%04X", port);
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!listening(local)) {
            if (server.isDone()) {
                fail("the server ended before listening: " + server.get());
            }
            if (System.nanoTime() > deadline) {
                fail("nothing listens on port " + port + " after " + DEADLINE);
            }
            TimeUnit.MILLISECONDS.sleep(20); // polling interval only
        }
    }

    private static boolean listening(String localPortSuffix) throws IOException {
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.exists(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && f[1].endsWith(localPortSuffix) && f[3].equals("0A")) {
                    return true;
                }
            }
        }
        return false;
    }
}
