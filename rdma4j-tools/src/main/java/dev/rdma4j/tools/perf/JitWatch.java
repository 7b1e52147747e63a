package dev.rdma4j.tools.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Whether this JVM's JIT compiler worked since the last look: its total compilation time grew, or (with
 * {@code threadTicks}) its compiler threads used CPU time, read from {@code /proc/self/task} (a long compile in
 * flight has not yet added to the total). The warm-ups of {@code rdma4j perf} and {@code rdma4j net-pingpong} go on
 * until it stays quiet, so that a measurement sees the code a long-running program runs.
 *
 * <p>Public for the measuring programs outside this package (rdma4j-bench's {@code NettyEchoCount}); not an API of
 * the library.
 *
 * <p>Not thread-safe: one thread looks.
 */
public final class JitWatch {
    private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    private final boolean threadTicks;
    private long lastMillis = -1;
    private long lastTicks = -1;

    /**
     * A watch of this JVM's JIT.
     *
     * @param threadTicks whether to read the compiler threads' CPU time too (files under {@code /proc}: not on a
     *                    thread that must not block, such as an engine's)
     */
    public JitWatch(boolean threadTicks) {
        this.threadTicks = threadTicks;
    }

    /**
     * Whether the JIT compiled since the last call (true at the first: there was no look before).
     *
     * @return whether it worked
     */
    public boolean compiledSinceLastLook() {
        long millis = compilationMillis(jit);
        long ticks = threadTicks ? Warmup.compilerThreadTicks() : 0;
        boolean busy = millis != lastMillis || ticks != lastTicks;
        lastMillis = millis;
        lastTicks = ticks;
        return busy;
    }

    /**
     * The JIT's total compilation time so far ({@link CompilationMXBean#getTotalCompilationTime}), 0 where it is not
     * measured.
     *
     * @param jit the JVM's compilation bean, or null (no JIT)
     * @return milliseconds
     */
    static long compilationMillis(CompilationMXBean jit) {
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }
}
