package dev.rdma4j.testing;

import java.util.concurrent.TimeUnit;

/**
 * The warm-up of the allocation counts: a fixed number of rounds was not enough for a JVM that ran one class
 * alone (counted while C1 still compiled the path, CompletionHandlerDeviceTest's engine thread allocated 65 KB over
 * 1,000 completions; in a full run other classes had warmed the same code).
 */
public final class JitQuiet {
    private JitQuiet() {
    }

    /** Runs {@code round} until the JIT compiled nothing during two rounds in a row (at most two minutes). */
    public static void untilQuiet(Runnable round) {
        var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        long last = jit.getTotalCompilationTime();
        int quiet = 0;
        while (quiet < 2 && System.nanoTime() < deadline) {
            round.run();
            long now = jit.getTotalCompilationTime();
            quiet = now == last ? quiet + 1 : 0;
            last = now;
        }
    }
}
