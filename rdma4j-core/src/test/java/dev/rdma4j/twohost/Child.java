package dev.rdma4j.twohost;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM (this one's class path and guest flags) running a test program's {@code main}, whose output
 * lines the test reads as they come, so that it can kill the child at a chosen moment (a peer that dies).
 */
final class Child implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder all = new StringBuilder();

    private Child(Process process) {
        this.process = process;
        Thread.ofPlatform().daemon().name("child-output").start(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null;) {
                    System.out.println("  [child] " + l);
                    synchronized (all) {
                        all.append(l).append('\n');
                    }
                    lines.add(l);
                }
            } catch (IOException e) {
                lines.add("(output lost: " + e + ")");
            }
        });
    }

    static Child start(Class<?> main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:ErrorFile=/tmp/hs_err_child_pid%p.log"));
        if (System.getenv("RDMA4J_IN_GUEST") != null) {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return new Child(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    /** Waits for an output line starting with {@code prefix}; fails (with the output) after {@code within}. */
    String awaitLine(String prefix, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new AssertionError("no line '" + prefix + "...' from the child within " + within
                        + " (alive: " + process.isAlive() + "); its output:\n" + output());
            }
            if (l.startsWith(prefix)) {
                return l;
            }
        }
    }

    /** SIGKILL, as a crash or the OOM killer would: no shutdown hook, no close, the kernel cleans up. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("killed child ended").isTrue();
    }

    int awaitExit(Duration within) throws InterruptedException {
        if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("child still running after " + within + "; killed. Output:\n" + output());
        }
        return process.exitValue();
    }

    String output() {
        synchronized (all) {
            return all.toString();
        }
    }

    /** Kills the child if it still runs (SIGKILL, not waited for). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
