package dev.rdma4j.tools.perf;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code rdma4j perf --loopback}: both sides on this machine. The server is a child JVM started with this JVM's
 * options and class path and the user's arguments (less {@code --loopback}, {@code --json} and {@code --plot},
 * which are the client's); this process is its client over 127.0.0.1, retrying the connection while the child
 * starts, and prints the results. The child's output goes to a temporary file, shown only if it fails.
 *
 * <p>Not thread-safe: the command's thread.
 */
final class PerfLoopback {
    /** How long the client retries connecting while the server's JVM starts (tens of seconds in the guest). */
    static final int CONNECT_SECONDS = 300;
    /** How long the server may take to end after the client did. */
    private static final long SERVER_EXIT_SECONDS = 60;

    private PerfLoopback() {
    }

    /**
     * Runs the server child and this side's client.
     *
     * @param p    the parameters as given (no server address)
     * @param args the command's own arguments, after {@code perf}
     * @param out  the results
     * @param err  errors
     * @return the exit status: 0, or 1 if either side failed
     * @throws PerfException if the client fails or the child cannot be started
     */
    static int run(PerfParameters p, List<String> args, PrintWriter out, PrintWriter err) throws PerfException {
        Path log;
        Process server;
        try {
            log = Files.createTempFile("rdma4j-perf-server", ".log");
            ProcessBuilder pb = new ProcessBuilder(serverCommand(args)).redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            pb.environment().remove(PerfCommand.AUTO_GUEST_ENV); // the child is the server, not another loopback
            server = pb.start();
        } catch (IOException e) {
            throw new PerfException("Couldn't start the server's JVM", e);
        }
        boolean ok = false;
        try {
            new PerfRun(p.asClientOf("127.0.0.1", Math.max(p.connectSeconds(), CONNECT_SECONDS)), out).run();
            ok = true;
        } finally {
            int status = finish(server);
            if (status != 0 || !ok) {
                out.flush();
                err.println("perf " + p.test().cliName() + ": the server (child JVM) "
                        + (status == Integer.MIN_VALUE ? "did not end" : "ended with status " + status) + "; its output:");
                try {
                    err.print(Files.readString(log));
                } catch (IOException e) {
                    err.println("(unreadable: " + e.getMessage() + ")");
                }
            }
            try {
                Files.deleteIfExists(log);
            } catch (IOException e) {
                // a temporary file left behind
            }
            if (ok && status != 0) {
                return 1;
            }
        }
        return 0;
    }

    /** Waits for the server to end, or kills it: its exit status, or {@link Integer#MIN_VALUE} if killed. */
    private static int finish(Process server) {
        try {
            if (server.waitFor(SERVER_EXIT_SECONDS, TimeUnit.SECONDS)) {
                return server.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.destroyForcibly();
        return Integer.MIN_VALUE;
    }

    /**
     * The server's command line: this JVM (binary, options, class path, main class) with {@code args} less the
     * options that only the client takes.
     *
     * @param args the command's arguments after {@code perf}
     * @return the command
     */
    static List<String> serverCommand(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(dev.rdma4j.tools.Main.class.getName());
        cmd.add("perf");
        cmd.addAll(serverArgs(args));
        return cmd;
    }

    /**
     * The arguments after {@code perf}: picocli hands a subcommand the whole command line.
     *
     * @param original the command line's arguments
     * @return those after the first {@code perf}, or all if there is none
     */
    static List<String> afterCommand(List<String> original) {
        int i = original.indexOf("perf");
        return i < 0 ? original : original.subList(i + 1, original.size());
    }

    /**
     * {@code args} without {@code --loopback}, {@code --json F} and {@code --plot F} (either form).
     *
     * @param args the command's arguments after {@code perf}
     * @return the server's
     */
    static List<String> serverArgs(List<String> args) {
        List<String> s = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--loopback")) {
                continue;
            }
            if (a.equals("--json") || a.equals("--plot")) {
                i++; // and its value
                continue;
            }
            if (a.startsWith("--json=") || a.startsWith("--plot=")) {
                continue;
            }
            s.add(a);
        }
        return s;
    }
}
