package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * What the interop device tests share: running a tool (rdma4j in-process, a C tool as a process) with a
 * deadline, waiting for a server to listen without spending its one accept, and reading the pingpong
 * tools' address lines.
 */
public final class ToolRuns {
    public static final Duration DEADLINE = Duration.ofSeconds(150);
    /**
     * The pingpong tools' "local address:" / "remote address:" line; groups: 2 LID, 3 QPN, 4 PSN, 5 the
     * separator before GID (ibv_ud_pingpong prints "PSN 0x...: GID"), 6 the GID.
     */
    public static final Pattern ADDRESS = Pattern.compile(
            "  (local address: |remote address:) LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})([,:]) GID (\\S+)");
    /** A daemon per run, so that a run stuck past its deadline cannot keep the test JVM alive. */
    private static final ExecutorService JAVA_RUNS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tool-run");
        t.setDaemon(true);
        return t;
    });

    private ToolRuns() {
    }

    /** One tool's run: its exit status and output. */
    public record Run(String who, int status, List<String> out, String err) {
        @Override
        public String toString() {
            return who + " exited " + status + "\n--- stdout\n" + String.join("\n", out) + "\n--- stderr\n" + err;
        }
    }

    /** Runs {@code bin/rdma4j argv...} in this JVM with its own stdout/stderr. */
    public static CompletableFuture<Run> java(String who, List<String> argv) {
        return java(who, argv, new StringWriter());
    }

    /** Like {@link #java(String, List)}, writing the tool's stdout to {@code out} as it goes. */
    public static CompletableFuture<Run> java(String who, List<String> argv, StringWriter out) {
        return CompletableFuture.supplyAsync(() -> {
            StringWriter err = new StringWriter();
            int status = Main.commandLine().setOut(new PrintWriter(out, true))
                    .setErr(new PrintWriter(err, true)).execute(argv.toArray(String[]::new));
            return new Run(who, status, out.toString().lines().toList(), err.toString());
        }, JAVA_RUNS);
    }

    /** Runs a C tool as a process, its output in files under {@code dir}; killed after the deadline. */
    public static CompletableFuture<Run> process(Path dir, String who, List<String> cmd) throws IOException {
        return process(dir, who, cmd, java.util.Map.of());
    }

    /** Like {@link #process(Path, String, List)}, with {@code env} added to the process's environment. */
    public static CompletableFuture<Run> process(Path dir, String who, List<String> cmd, java.util.Map<String, String> env)
            throws IOException {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
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

    /**
     * Runs a tool by its name: rdma4j's ({@code bin/rdma4j TOOL ARGS} in this JVM, its stdout written to
     * {@code liveOut} as it goes) or the C tool of that name as a process, and logs how long the run took (the guest
     * is slow: the log shows where the time goes).
     *
     * @param dir     where a process's output files go
     * @param rdma4j  rdma4j's tool, else the C one
     * @param tool    the name, the same for both
     * @param args    its arguments
     * @param liveOut rdma4j's stdout as it is written (a process's comes at its end)
     * @return the run, when it ended
     * @throws IOException if the process cannot start
     */
    public static CompletableFuture<Run> tool(Path dir, boolean rdma4j, String tool, List<String> args,
            StringWriter liveOut) throws IOException {
        String who = (rdma4j ? "rdma4j " : "") + tool + " " + String.join(" ", args);
        long t0 = System.nanoTime();
        List<String> argv = new java.util.ArrayList<>(List.of(tool));
        argv.addAll(args);
        CompletableFuture<Run> run = rdma4j ? java(who, argv, liveOut) : process(dir, who, argv);
        return run.thenApply(r -> {
            System.out.printf("%s: exit %d after %d ms%n", r.who(), r.status(), (System.nanoTime() - t0) / 1_000_000);
            return r;
        });
    }

    public static Run finish(CompletableFuture<Run> run) throws Exception {
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
    public static void awaitListening(int port, CompletableFuture<Run> server) throws Exception {
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

    /** Group {@code group} of the address line {@code line} of a run. */
    public static String field(Run r, int line, int group) {
        Matcher m = ADDRESS.matcher(r.out().get(line));
        assertThat(m.matches()).as("%s", r).isTrue();
        return m.group(group);
    }

    /** A line with its variable numbers masked. */
    public static String shape(String line) {
        return line.replaceAll("0x[0-9a-f]+", "0x#").replaceAll("\\d+\\.\\d\\d", "#.##")
                .replace("local address:  ", "ADDRESS:").replace("remote address: ", "ADDRESS:");
    }

    public static String value(List<String> opts, String flag) {
        return opts.get(opts.indexOf(flag) + 1);
    }
    /**
     * Waits until an rdma_cm id listens on {@code port}, as the kernel reports it ({@code rdma -j resource show
     * cm_id}, in either port space); between looks it waits for the server to end, which fails the test.
     */
    public static void awaitCmListening(int port, CompletableFuture<Run> server) throws Exception {
        Pattern listening = Pattern.compile("\"state\":\"LISTEN\"[^}]*\"src-addr\":\"[^\"]*:" + port + "\"");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        for (;;) {
            Process p = new ProcessBuilder("rdma", "-j", "resource", "show", "cm_id").redirectErrorStream(true)
                    .start();
            String shown = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as("rdma resource show cm_id: %s", shown).isZero();
            if (listening.matcher(shown).find()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("nothing listens on port " + port + " after " + DEADLINE + ": " + shown);
            }
            serverEndsWithin(server, 20);
        }
    }

    /** Fails the test if the server ends within {@code ms} milliseconds; else returns after them. */
    public static void serverEndsWithin(CompletableFuture<Run> server, long ms) throws Exception {
        try {
            Run r = server.get(ms, TimeUnit.MILLISECONDS);
            fail("the server ended before its client ran: " + r);
        } catch (TimeoutException stillRunning) {
            // as it should be
        } catch (ExecutionException e) {
            throw new AssertionError("the server's run failed", e.getCause());
        }
    }
}
