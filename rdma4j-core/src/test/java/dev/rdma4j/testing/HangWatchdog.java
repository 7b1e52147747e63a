package dev.rdma4j.testing;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * The device and two-host suites' hang detector: a JUnit Platform listener (registered through
 * {@code META-INF/services}) that, when the system property {@code rdma4j.hangLimit} gives a number of seconds, watches
 * the running test. A test that runs longer than that (or than its class's {@link Limit}, times the load factor
 * {@code rdma4j.hangLimit.factor}, default 1) is named on standard output with the stack of every thread of this JVM
 * and of every child JVM it started ({@code jcmd PID Thread.print}); then its thread is interrupted, and if it is still
 * the same test a minute later the JVM halts with status 124, so that a hang ends the run with its evidence instead of
 * running into an outer time limit that says nothing. Without the property it does nothing (the Maven host tests).
 *
 * <p>The limit is per test, not per run: a suite slowed by load as a whole never trips it, only one test that runs far
 * beyond its own quiet duration. Threading: the listener's callbacks run on the test-executing thread; the watchdog is
 * one daemon thread that reads the current test through a volatile field.
 */
public final class HangWatchdog implements TestExecutionListener {

    /** A class whose tests take long by design (a soak, a child JVM's cycles) states its own limit per test. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    public @interface Limit {
        /** @return seconds a test of this class may run on a quiet machine's guest, times the suite's factor */
        long seconds();
    }

    private record Running(TestIdentifier test, Thread thread, long startNanos, long limitSeconds) {
    }

    private final long defaultLimit;
    private final double factor;
    private final long graceSeconds;
    private final PrintStream out;
    private final Runnable halt;
    private volatile Running running;
    private Thread watchdog;

    /** The listener JUnit loads: limits from the system properties, reports on standard output. */
    public HangWatchdog() {
        this(Long.getLong("rdma4j.hangLimit", 0),
                Double.parseDouble(System.getProperty("rdma4j.hangLimit.factor", "1")), 60, System.out,
                () -> Runtime.getRuntime().halt(124));
    }

    HangWatchdog(long defaultLimit, double factor, long graceSeconds, PrintStream out, Runnable halt) {
        this.defaultLimit = defaultLimit;
        this.factor = factor;
        this.graceSeconds = graceSeconds;
        this.out = out;
        this.halt = halt;
    }

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        if (defaultLimit <= 0) {
            return;
        }
        watchdog = Thread.ofPlatform().daemon().name("rdma4j-hang-watchdog").start(this::watch);
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (watchdog != null) {
            watchdog.interrupt();
        }
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (defaultLimit > 0 && id.isTest()) {
            running = new Running(id, Thread.currentThread(), System.nanoTime(), (long) Math.ceil(limitOf(id) * factor));
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        Running r = running;
        if (r != null && r.test().equals(id)) {
            running = null;
        }
    }

    private long limitOf(TestIdentifier id) {
        Class<?> type = id.getSource().map(s -> s instanceof MethodSource m ? m.getJavaClass()
                : s instanceof ClassSource c ? c.getJavaClass() : null).orElse(null);
        for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
            Limit l = c.getAnnotation(Limit.class);
            if (l != null) {
                return Math.max(defaultLimit, l.seconds());
            }
        }
        return defaultLimit;
    }

    private void watch() {
        try {
            while (true) {
                TimeUnit.SECONDS.sleep(1);
                Running r = running;
                if (r == null || System.nanoTime() - r.startNanos() < TimeUnit.SECONDS.toNanos(r.limitSeconds())) {
                    continue;
                }
                report(r, "has run " + r.limitSeconds() + " s, its limit (-Drdma4j.hangLimit, x" + factor
                        + "); its thread is interrupted");
                r.thread().interrupt();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(graceSeconds);
                while (running == r && System.nanoTime() < until) {
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                if (running == r) {
                    report(r, "is still running " + graceSeconds
                            + " s after its thread was interrupted; the JVM halts (status 124)");
                    System.out.flush();
                    System.err.flush();
                    halt.run();
                    return;
                }
            }
        } catch (InterruptedException done) {
            // the test plan finished
        }
    }

    /** Names the test and prints every thread's stack, this JVM's and its child JVMs'. */
    private void report(Running r, String what) {
        StringBuilder b = new StringBuilder();
        b.append("HANG: ").append(name(r.test())).append(' ').append(what).append('\n');
        b.append("HANG: the threads of this JVM (pid ").append(ProcessHandle.current().pid()).append("):\n");
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            b.append('"').append(t.getName()).append("\" ").append(t.isDaemon() ? "daemon " : "").append(t.getState())
                    .append('\n');
            for (StackTraceElement f : e.getValue()) {
                b.append("    at ").append(f).append('\n');
            }
        }
        out.print(b);
        ProcessHandle.current().descendants().filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false))
                .forEach(p -> out.print(childThreads(p.pid())));
        out.flush();
    }

    private static String name(TestIdentifier id) {
        return id.getSource().map(s -> s instanceof MethodSource m ? m.getClassName() + "#" + m.getMethodName()
                : s.toString()).orElse(id.getUniqueId()) + " (" + id.getDisplayName() + ")";
    }

    private static String childThreads(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            // to a file, not a pipe: a child too stuck to answer must not hang the report
            Path file = Files.createTempFile("rdma4j-hang-" + pid, ".txt");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print").redirectErrorStream(true)
                    .redirectOutput(file.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            String dump = Files.readString(file, StandardCharsets.UTF_8);
            Files.deleteIfExists(file);
            return "HANG: the threads of child JVM " + pid + " (jcmd Thread.print):\n" + dump + "\n";
        } catch (IOException | InterruptedException e) {
            return "HANG: no thread dump of child JVM " + pid + ": " + e + "\n";
        }
    }
}
