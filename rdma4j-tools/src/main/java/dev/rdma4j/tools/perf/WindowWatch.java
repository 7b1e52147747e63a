package dev.rdma4j.tools.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * How much this JVM's JIT compiled and whether its collector ran during a measured run: looked at before the run and
 * after it, each time outside every side's measured window (before the barrier that starts the run, after the one that
 * ends it), and said in one line, to the instrument only (a run with {@code --icount-marks}: otherwise the tools print
 * what perftest and rc_pingpong print). A run is <em>disturbed</em> ({@link #disturbed}) when the JIT compiled for
 * {@link #DISTURBING_MILLIS} or more, its threads used at least {@link #DISTURBING_TICKS} clock ticks of CPU in it, or
 * a collection ran: {@code scripts/perf-compare --icount} runs
 * such a round again, since the guest's instruction count of a window holds every vCPU's work, a compilation's too.
 * Smaller compilations (a method or two first run around the loop) are said but not counted as one.
 *
 * <p>Not thread-safe: one thread looks.
 */
final class WindowWatch {
    /** How a disturbed run's line starts (scripts/lib/perf-compare/icount.sh looks for it). */
    static final String DISTURBED = "# measured run disturbed";
    /**
     * Compiler threads' CPU in a run that makes it disturbed: 25 ticks, 250 ms at Linux's 100 a second (a compilation
     * of ~650 M guest instructions in send_lat -e's window, 2026-11-29; a method or two compiled around a run: a tick
     * or none).
     */
    static final long DISTURBING_TICKS = 25;
    /**
     * The JIT's own compilation time in a run that makes it disturbed, whatever its threads' ticks: 80 ms. A C2
     * compilation of 242 M guest instructions in send_lat -e's window (2026-11-29 (g)) was reported as 122 ms and
     * fewer than 25 ticks, so the ticks alone let it count; the runs that counted right reported 20-36 ms.
     */
    static final long DISTURBING_MILLIS = 80;
    private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    private long millis;
    private long ticks;
    private long collections;

    /** The look before a run (outside the windows: before the barrier that starts it). */
    void before() {
        millis = JitWatch.compilationMillis(jit);
        ticks = Warmup.compilerThreadTicks();
        collections = collections();
    }

    /**
     * The look after a run (after the barrier that ends it), which is also the look before the next one.
     *
     * @param side "client" or "server"
     * @return the line to print when the JIT compiled or the heap was collected since the look before, else null
     */
    String after(String side) {
        long m = JitWatch.compilationMillis(jit);
        long t = Warmup.compilerThreadTicks();
        long c = collections();
        long dm = m - millis;
        long dt = t - ticks;
        long dc = c - collections;
        millis = m;
        ticks = t;
        collections = c;
        if (dm == 0 && dt == 0 && dc == 0) {
            return null;
        }
        return (disturbed(dm, dt, dc) ? DISTURBED : "# measured run") + " (" + side + "): the JIT compiled for "
                + dm + " ms, its threads used " + dt + " ticks of CPU, " + dc + " collection(s) during it";
    }

    /**
     * Whether a run with this much compilation and collection was disturbed (its count holds the JIT's or the
     * collector's work).
     *
     * @param compiledMillis the JIT's compilation time during the run
     * @param compilerTicks  its threads' CPU during the run, in clock ticks
     * @param collections    the collections during the run
     * @return true when the run should be measured again
     */
    static boolean disturbed(long compiledMillis, long compilerTicks, long collections) {
        return compiledMillis >= DISTURBING_MILLIS || compilerTicks >= DISTURBING_TICKS || collections > 0;
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }
}
