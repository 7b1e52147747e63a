package dev.rdma4j;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
import dev.rdma4j.testing.HangWatchdog;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, leaks (issue 29, faster): cycles of create / use / close of every kind of object, in a child JVM started
 * with {@code -XX:NativeMemoryTracking=summary}, checked two ways.
 *
 * <p>Exactly: the open file descriptors ({@code /proc/self/fd}) and the kernel's rxe object counts
 * ({@code rdma -j resource show}: pd, cq, qp, mr, srq, cm_id, ctx) are the same after a kind's cycles as before them
 * (one leaked fd or kernel object is one too many, at any number of cycles).
 *
 * <p>By the growth over the cycles: native memory is sampled after the warm-up and again after each of
 * {@link #ROUNDS} rounds of cycles, and the slope in bytes per cycle of each figure is fitted (Theil-Sen: the median
 * of the slopes between every two samples, which one outlying sample hardly moves) and must stay below a threshold
 * smaller than the smallest real leak: NMT's category "Other", where the JVM counts the memory of FFM arenas
 * (rdma4j's own native memory), at most {@link #FFM_MAX_SLOPE} bytes a cycle (the real leak once found was 8); and
 * what native code outside the JVM has malloc'ed (libibverbs, librdmacm, the rxe provider), which NMT cannot see:
 * glibc's in-use bytes ({@code mallinfo2()}) less NMT's malloc total and its overhead per malloc
 * ({@link #JVM_MALLOC_OVERHEAD}), at most {@link #NATIVE_MAX_SLOPE} bytes a cycle (a leaked verbs object is a malloc
 * of 100 bytes or more). NMT's malloc total itself (the JVM's own) is fitted and printed, not asserted.
 *
 * <p>The detection power is shown in every run, by control kinds in the same child at the fewest cycles any real
 * kind runs, which must be flagged: {@code leak-ffm-8} (a thread that allocates 8 bytes in the global arena and ends,
 * the shape of the real leak), {@code leak-malloc-100} (100 bytes malloc'ed and never freed: a verbs object) and
 * {@code leak-fd} (an fd kept open). The control {@code thread} (a Java thread started and joined, no rdma4j object)
 * shows what a bare thread leaves in glibc's heap outside NMT's view; it is printed, not asserted (the 26 bytes a
 * thread the 10,000-cycle test once allowed for were the JVM's own malloc overhead, now subtracted: some 6 are left).
 *
 * <p>The noise, measured in the guest: NMT Other is exact, 0.00 bytes a cycle for every real kind; the figure outside
 * the JVM fits within some ±10 bytes a cycle for every real kind but the connection (-10 to +37: its first round
 * steps up, then it wanders by some 10 KiB; +37 was at 400 cycles, hence 1,200 after a warm-up of 400), so the thresholds sit 4 (FFM) and ~45
 * (native) bytes a cycle from the controls' slopes (8 and 105-109).
 */
@Tag("device")
@HangWatchdog.Limit(seconds = 1800)
class LeakCyclesDeviceTest {

    /** The figures sampled after the warm-up and after each of this many rounds of a kind's cycles. */
    static final int ROUNDS = 10;

    /**
     * Cycles per kind (the costly kinds fewer: an RC pair, an engine's thread, a context): some 150 s in the guest on
     * a quiet machine, twice that beside the two-host tests' guests in {@code scripts/test}. The fewer cycles, the
     * more one round's noise weighs in the fitted slope: at these counts every kind but the connection fitted within
     * ±8.4 bytes a cycle outside the JVM (limit 64) in a quiet run of 2026-11-26. The connection over rdma_cm keeps
     * 1,200: at 800 (after the same warm-up of 400) its figure climbed 50 KiB over the first three rounds and fell
     * 25 KiB over the rest, a fit of -39.7, as far from zero as +39.7 would be. The RC pair's 1,000 (2,000 before the
     * fit forgave one step, {@link #nativeSlope}) became 700.
     */
    static final String DEFAULT_CYCLES = "context=700,pd=2000,mr=2000,cq=2000,channel=1500,qp-rc=700,qp-ud=1500,"
            + "ah=2000,srq=1500,engine=700,net=1200";

    /**
     * Warm-up cycles of the kinds that need more than the usual 100: the connection kind's figure outside the JVM
     * climbs for its first few hundred cycles (four threads' glibc arenas and librdmacm's per-connection allocations
     * reaching their working size: +100 KiB over 600 cycles, most of it early, in a quiet run of 2026-11-26 that fitted
     * +59.6 bytes a cycle at 600 cycles without this warm-up), then stays flat.
     */
    static final Map<String, Integer> WARMUP = Map.of("net", 400);

    /**
     * The long soak, 10,000 cycles of each kind (the first figure; ~15 min in the guest): in the environment
     * {@code RDMA4J_SOAK=1} ({@code scripts/test --soak}), or {@code -Drdma4j.leakSoak=true}.
     */
    static final boolean SOAK = Boolean.parseBoolean(System.getProperty("rdma4j.leakSoak", "false"))
            || "1".equals(System.getenv("RDMA4J_SOAK"));

    static final String SOAK_CYCLES = "context=10000,pd=10000,mr=10000,cq=10000,channel=10000,qp-rc=10000,"
            + "qp-ud=10000,ah=10000,srq=10000,engine=10000,net=10000";

    /**
     * Cycles per kind: {@code -Drdma4j.leakCycles=} or {@code RDMA4J_LEAK_CYCLES=} in the environment
     * ({@code kind=count,...}) run just those kinds, e.g. fewer for a quick look. The controls always run: the
     * {@code thread} one first (a tenth of the most cycles, at least 1,000), the leaking ones last, at the fewest
     * cycles a real kind runs ({@code leak-fd} 8).
     */
    static final Map<String, Integer> CYCLES = cycles(System.getProperty("rdma4j.leakCycles",
            System.getenv("RDMA4J_LEAK_CYCLES") != null ? System.getenv("RDMA4J_LEAK_CYCLES")
                    : SOAK ? SOAK_CYCLES : DEFAULT_CYCLES));

    /** The controls that leak, each flagged by one figure. */
    static final List<String> LEAKING = List.of("leak-ffm-8", "leak-malloc-100", "leak-fd");

    /**
     * Kinds whose cycles run on several threads at once: a connection's set-up is mostly waiting (rdma_cm's
     * exchanges, the engine threads' hand-offs), so four at a time take about half as long as one after another;
     * the kinds that share the fixture's CQs run one at a time.
     */
    static final Map<String, Integer> PARALLEL = Map.of("net", 4);

    /**
     * The most NMT "Other" (FFM arenas) may grow, bytes a cycle: half the smallest leak seen (8 bytes a cycle, a
     * per-thread errno slot in the global arena). Every rdma4j object allocates at least one arena of its own, so an
     * object leaked per cycle is far beyond it.
     */
    static final double FFM_MAX_SLOPE = 4;

    /**
     * The most the bytes malloc'ed outside the JVM (glibc's in-use bytes less NMT's malloc total) may grow, bytes a
     * cycle, before the per-thread allowance: a leaked {@code ibv_pd}, {@code ibv_mr}, {@code ibv_cq}, ... is a
     * malloc of 100 bytes or more (112 in glibc's heap).
     */
    static final double NATIVE_MAX_SLOPE = 64;

    /**
     * Bytes glibc's heap holds per malloc of the JVM beyond what NMT counts (NMT's header, glibc's chunk header and
     * rounding): 22.0 for 20,000 allocations of 8, 24 or 100 bytes (Temurin 25, glibc 2.36). The figure outside the
     * JVM is glibc's in-use bytes less NMT's malloc total less this much per NMT malloc, so that the JVM's own mallocs
     * and frees (the compiler's, by the thousand) do not move it.
     */
    static final long JVM_MALLOC_OVERHEAD = 22;

    private static Map<String, Integer> cycles(String spec) {
        Map<String, Integer> real = new LinkedHashMap<>();
        for (String kv : spec.split(",")) {
            String[] p = kv.split("=");
            real.put(p[0].trim(), Integer.parseInt(p[1].trim()));
        }
        int fewest = real.values().stream().mapToInt(Integer::intValue).min().orElse(400);
        int most = real.values().stream().mapToInt(Integer::intValue).max().orElse(400);
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("thread", Math.max(1000, most / 10)); // the control, first
        m.putAll(real);
        m.put("leak-ffm-8", fewest);
        m.put("leak-malloc-100", fewest);
        m.put("leak-fd", 8);
        return m;
    }

    /** The slope of y over x, Theil-Sen: the median of the slopes between every two points. */
    static double theilSen(long[] x, long[] y) {
        List<Double> slopes = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            for (int j = i + 1; j < x.length; j++) {
                if (x[j] != x[i]) {
                    slopes.add((double) (y[j] - y[i]) / (x[j] - x[i]));
                }
            }
        }
        return slopes.isEmpty() ? 0 : median(slopes.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** The median of {@code v} (sorted in place). */
    static double median(double[] v) {
        java.util.Arrays.sort(v);
        int k = v.length;
        return k % 2 == 1 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    }

    /**
     * The growth in bytes a cycle of the figure outside the JVM, samples {@code y} at {@code x} cycles: Theil-Sen from
     * the end of the first round on, across one step forgiven.
     *
     * <p>From the end of the first round: the figure may step once in a kind's first round (glibc's per-thread arenas
     * of the kind's threads reaching their working size: the connection kind's steps 50-110 KiB there in every run,
     * then stays flat), which is no growth per cycle. One step forgiven: the round whose change is farthest from the
     * median round's change counts as the median round's. Something outside NMT's view (a library's cache, an arena
     * trimmed) may free or take some KiB once, at any round; Theil-Sen shrugs off one outlying sample but not a step
     * in the middle of the series, which half of its pairs cross: a quiet fresh-machine run fitted the control
     * {@code leak-malloc-100} (112 bytes a cycle in glibc's heap) at +67.7 against a limit of 64 for one drop of 23 KiB
     * at round 6. A leak grows in every round, so forgiving one round cannot hide it.
     */
    static double nativeSlope(long[] x, long[] y) {
        int n = x.length - 1; // samples 1..n, n - 1 rounds
        long[] fx = java.util.Arrays.copyOfRange(x, 1, x.length);
        long[] fy = java.util.Arrays.copyOfRange(y, 1, y.length);
        if (n < 3) {
            return theilSen(fx, fy);
        }
        double[] rates = new double[n - 1];
        for (int i = 0; i < n - 1; i++) {
            rates[i] = (double) (fy[i + 1] - fy[i]) / (fx[i + 1] - fx[i]);
        }
        double median = median(rates.clone());
        int worst = 0;
        for (int i = 1; i < rates.length; i++) {
            if (Math.abs(rates[i] - median) > Math.abs(rates[worst] - median)) {
                worst = i;
            }
        }
        long[] forgiven = fy.clone();
        long shift = Math.round(median * (fx[worst + 1] - fx[worst])) - (fy[worst + 1] - fy[worst]);
        for (int i = worst + 1; i < n; i++) {
            forgiven[i] += shift;
        }
        return theilSen(fx, forgiven);
    }

    /**
     * One kind's figures, as the child prints them: the samples (bytes) after the warm-up and after each round, at
     * {@code x} cycles done.
     */
    record Result(String kind, int cycles, long millis, long fdsBefore, long fdsAfter, Map<String, Long> rxeBefore,
            Map<String, Long> rxeAfter, long threads, Map<String, long[]> samples) {
        static Result parse(String line) {
            String[] f = line.trim().split(" ");
            Map<String, long[]> samples = new LinkedHashMap<>();
            for (int i = 9; i < f.length; i++) {
                String[] kv = f[i].split("=");
                samples.put(kv[0], java.util.Arrays.stream(kv[1].split(",")).mapToLong(Long::parseLong).toArray());
            }
            return new Result(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                    Long.parseLong(f[5]), counts(f[6]), counts(f[7]), Long.parseLong(f[8]), samples);
        }

        private static Map<String, Long> counts(String s) {
            Map<String, Long> m = new LinkedHashMap<>();
            for (String kv : s.split(",")) {
                String[] p = kv.split("=");
                m.put(p[0], Long.parseLong(p[1]));
            }
            return m;
        }

        long[] x() {
            return samples.get("x");
        }

        /** Bytes malloc'ed outside the JVM: glibc's in-use bytes less NMT's malloc total and overhead. */
        long[] outside() {
            long[] g = samples.get("glibc");
            long[] n = samples.get("malloc");
            long[] c = samples.get("count");
            long[] r = new long[g.length];
            for (int i = 0; i < r.length; i++) {
                r[i] = g[i] - n[i] - JVM_MALLOC_OVERHEAD * c[i];
            }
            return r;
        }

        long[] ffm() {
            return samples.get("other");
        }

        double ffmSlope() {
            return theilSen(x(), ffm());
        }

        /** {@link LeakCyclesDeviceTest#nativeSlope(long[], long[])} of this kind's figure outside the JVM. */
        double nativeSlope() {
            return LeakCyclesDeviceTest.nativeSlope(x(), outside());
        }

        double jvmSlope() {
            return theilSen(x(), samples.get("malloc"));
        }

        double threadsPerCycle() {
            return (double) threads / cycles;
        }

        double nativeMax() {
            return NATIVE_MAX_SLOPE;
        }

        String row() {
            long[] f = ffm();
            long[] o = outside();
            long[] j = samples.get("malloc");
            return String.format("| %s | %d | %.1f | %d → %d | %s | %s | %d → %d | %+.2f | %d → %d | %+.1f (max %.0f) |"
                    + " %.2f | %d → %d, %+.0f |", kind, cycles, (double) millis / cycles, fdsBefore, fdsAfter,
                    compact(rxeBefore), rxeAfter.equals(rxeBefore) ? "same" : compact(rxeAfter), f[0] / 1024,
                    f[f.length - 1] / 1024, ffmSlope(), o[0] / 1024, o[o.length - 1] / 1024, nativeSlope(),
                    nativeMax(), threadsPerCycle(), j[0] / 1024, j[j.length - 1] / 1024, jvmSlope());
        }

        private static String compact(Map<String, Long> m) {
            StringBuilder b = new StringBuilder();
            m.forEach((k, v) -> b.append(b.isEmpty() ? "" : " ").append(k).append(' ').append(v));
            return b.toString();
        }
    }

    @Test
    void everyKindOfObjectLeavesNothingBehindAfterItsCycles(@TempDir Path dir) throws Exception {
        List<String> args = new ArrayList<>();
        CYCLES.forEach((k, n) -> args.add(k + "=" + n));
        long start = System.nanoTime();
        ChildJvm child = ChildJvm.run(dir, List.of("-XX:NativeMemoryTracking=summary", "-Xmx256m"), 3600,
                Cycles.class, args.toArray(String[]::new)).survived();
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        List<Result> results = child.output().lines().filter(l -> l.startsWith("RESULT ")).map(Result::parse).toList();
        System.out.println("leak cycles" + (SOAK ? " (soak)" : "") + ": " + seconds + " s in all (a child JVM with"
                + " NMT); before → after the cycles, memory in KiB; slopes (Theil-Sen over " + (ROUNDS + 1)
                + " samples) in bytes a cycle");
        System.out.println("| kind | cycles | ms/cycle | open fds | rxe objects (kernel) before | after |"
                + " NMT Other (FFM) | its slope (max " + (long) FFM_MAX_SLOPE + ") | malloc outside the JVM |"
                + " its slope | threads a cycle | NMT malloc (JVM, not asserted) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
        results.forEach(r -> System.out.println(r.row()));
        child.output().lines().filter(l -> l.startsWith("fds of ") || l.startsWith("child time:"))
                .forEach(System.out::println);
        results.forEach(r -> System.out.println("samples of " + r.kind() + ": x " + java.util.Arrays.toString(r.x())
                + ", Other " + java.util.Arrays.toString(r.ffm()) + ", outside "
                + java.util.Arrays.toString(r.outside()) + ", glibc less NMT " + java.util.Arrays.toString(
                        java.util.stream.IntStream.range(0, r.x().length).mapToLong(i -> r.samples().get("glibc")[i]
                                - r.samples().get("malloc")[i]).toArray()) + ", NMT count "
                + java.util.Arrays.toString(r.samples().get("count"))));
        assertThat(results.stream().map(Result::kind).toList()).as("kinds run; output:%n%s", child.output())
                .containsExactlyElementsOf(CYCLES.keySet());
        for (Result r : results) {
            assertThat(r.cycles()).isEqualTo(CYCLES.get(r.kind()));
            assertThat(r.rxeAfter()).as("%s: the kernel's rxe objects after %d cycles", r.kind(), r.cycles())
                    .isEqualTo(r.rxeBefore());
            if (r.kind().equals("leak-fd")) {
                assertThat(r.fdsAfter() - r.fdsBefore()).as("leak-fd, the control: an fd kept a cycle, flagged")
                        .isEqualTo(r.cycles());
                continue;
            }
            assertThat(r.fdsAfter()).as("%s: open fds after %d cycles", r.kind(), r.cycles()).isEqualTo(r.fdsBefore());
            if (r.kind().equals("leak-ffm-8")) {
                assertThat(r.ffmSlope()).as("leak-ffm-8, the control: 8 bytes a cycle in the global arena, flagged by"
                        + " the slope of NMT Other (bytes a cycle)").isGreaterThan(FFM_MAX_SLOPE);
            } else {
                assertThat(r.ffmSlope()).as("%s: slope of NMT Other (FFM), bytes a cycle, over %d cycles", r.kind(),
                        r.cycles()).isLessThanOrEqualTo(FFM_MAX_SLOPE);
            }
            if (r.kind().equals("leak-malloc-100")) {
                assertThat(r.nativeSlope()).as("leak-malloc-100, the control: 100 bytes malloc'ed a cycle, flagged by"
                        + " the slope outside the JVM (bytes a cycle, %.2f threads a cycle)", r.threadsPerCycle())
                        .isGreaterThan(r.nativeMax());
            } else if (r.kind().equals("thread")) {
                System.out.printf("thread, the control: a Java thread started and ended leaves %+.1f bytes outside"
                        + " NMT's view (not asserted: the JVM's or glibc's)%n", r.nativeSlope());
            } else {
                assertThat(r.nativeSlope()).as("%s: slope of the bytes malloc'ed outside the JVM, bytes a cycle, over %d"
                        + " cycles (%.2f threads a cycle)", r.kind(), r.cycles(), r.threadsPerCycle())
                        .isLessThanOrEqualTo(r.nativeMax());
            }
        }
        assertThat(child.output()).as("the leak detector in the child: nothing collected unclosed")
                .contains("LEAKS REPORTED 0 (level " + LeakDetection.level() + ")").doesNotContain("LEAK:");
    }

    /** Child: runs the cycles named in its arguments ({@code kind=count}) and prints one RESULT line per kind. */
    public static final class Cycles {
        private static final AccessFlag[] RW = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ};

        private final Device device = TestDevice.device();
        private final Loopback rc;
        private final Loopback ud;
        private final MemoryRegion buf;
        private final MemoryRegion udBuf;
        private final QpEndpoint udTarget;
        private final int gidIndex;
        private final AddressHandle udAh;
        private final SendBatch sb = new SendBatch(1, 1);
        private final WorkCompletions wcs = new WorkCompletions(16);

        private Cycles() throws Exception {
            rc = new Loopback(QpType.RC);
            ud = new Loopback(QpType.UD);
            buf = rc.pd.allocate(4096, RW);
            udBuf = ud.pd.allocate(4096, RW);
            gidIndex = ud.ctx.bestRoceGid(1).index();
            udTarget = ud.b.localEndpoint(0, gidIndex);
            udAh = ud.pd.createAddressHandle(AddressHandle.Attributes.to(udTarget, 1, gidIndex));
        }

        private static final long START = System.nanoTime()
                - TimeUnit.MILLISECONDS.toNanos(ManagementFactory.getRuntimeMXBean().getUptime());

        public static void main(String[] args) throws Exception {
            Cycles c = new Cycles();
            // the probes' own first use (a child process, the diagnostic MBean) opens what they keep open
            fds();
            c.rxeCounts();
            memory();
            for (String a : args) {
                String[] p = a.split("=");
                c.run(p[0], Integer.parseInt(p[1]));
            }
            c.close();
            settle();
            System.out.println("LEAKS REPORTED " + LeakDetection.leaksReported() + " (level " + LeakDetection.level()
                    + ")");
            System.out.println("child time: cycles " + TimeUnit.NANOSECONDS.toSeconds(cyclesNanos) + " s, measuring "
                    + TimeUnit.NANOSECONDS.toSeconds(probeNanos) + " s, collecting garbage "
                    + TimeUnit.NANOSECONDS.toSeconds(settleNanos) + " s, in all (with the warm-ups and the JVM's start) "
                    + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - START) + " s since its start");
            System.out.println("done");
        }

        private void close() {
            udAh.close();
            buf.close();
            udBuf.close();
            sb.close();
            wcs.close();
            rc.close();
            ud.close();
        }

        private void run(String kind, int n) throws Exception {
            Cycle cycle = switch (kind) {
                case "context" -> this::context;
                case "pd" -> this::pd;
                case "mr" -> this::mr;
                case "cq" -> this::cq;
                case "channel" -> this::channel;
                case "qp-rc" -> this::qpRc;
                case "qp-ud" -> this::qpUd;
                case "ah" -> this::ah;
                case "srq" -> this::srq;
                case "engine" -> this::engine;
                case "net" -> this::net;
                case "thread" -> this::thread;
                case "leak-ffm-8" -> this::leakFfm;
                case "leak-malloc-100" -> this::leakMalloc;
                case "leak-fd" -> this::leakFd;
                default -> throw new IllegalArgumentException(kind);
            };
            // warm-up: 100 cycles (10% of them, at least 3, for the kinds run fewer times), enough for glibc's
            // per-thread malloc arenas (the engine's thread) to reach their working size, ...
            int threads = PARALLEL.getOrDefault(kind, 1);
            // on as many threads as the kind's cycles (glibc's arenas for as many threads)
            if (!kind.startsWith("leak-")) {
                runCycles(cycle, 0, WARMUP.getOrDefault(kind, Math.min(100, Math.max(3 * threads, n / 10))), threads);
            }
            settle();
            long p0 = System.nanoTime();
            // the first sample as every other, right after the settling (the kernel's counts after it). The connection
            // kind's figure outside the JVM still steps up 50-110 KiB in its first round in every run (then flat,
            // whatever the warm-up, 40 to 100 cycles): a first-sample outlier, which the Theil-Sen fit hardly feels
            int rounds = Math.min(ROUNDS, n);
            long[][] samples = new long[6][rounds + 1]; // x, Other, NMT malloc, its count, glibc, fds
            sample(samples, 0, 0);
            Map<Integer, String> fds = fds();
            Map<String, Long> rxe = rxeCounts();
            long probes = System.nanoTime() - p0;
            long started = THREADS.getTotalStartedThreadCount();
            long cycling = 0;
            for (int r = 1, done = 0; r <= rounds; r++) {
                int to = (int) ((long) n * r / rounds);
                long t0 = System.nanoTime();
                runCycles(cycle, done, to, threads);
                cycling += System.nanoTime() - t0;
                done = to;
                settle();
                p0 = System.nanoTime();
                sample(samples, r, done);
                probes += System.nanoTime() - p0;
            }
            long threadsStarted = THREADS.getTotalStartedThreadCount() - started - (threads > 1 ? threads * rounds : 0);
            long millis = TimeUnit.NANOSECONDS.toMillis(cycling);
            p0 = System.nanoTime();
            Map<Integer, String> fdsAfter = fds();
            Map<String, Long> rxeAfter = rxeCounts();
            probes += System.nanoTime() - p0;
            cyclesNanos += cycling;
            probeNanos += probes;
            if (!fdsAfter.equals(fds)) {
                Map<Integer, String> added = new java.util.TreeMap<>(fdsAfter);
                added.keySet().removeAll(fds.keySet());
                Map<Integer, String> gone = new java.util.TreeMap<>(fds);
                gone.keySet().removeAll(fdsAfter.keySet());
                System.out.println("fds of " + kind + ": new " + added + ", gone " + gone);
            }
            // the figures: fds, the kernel's counts, the threads started, and the samples: NMT's "Other" (FFM memory),
            // its malloc total and count, glibc's in-use bytes, the open fds
            StringBuilder line = new StringBuilder("RESULT " + kind + " " + n + " " + millis + " " + fds.size() + " "
                    + fdsAfter.size() + " " + format(rxe) + " " + format(rxeAfter) + " " + threadsStarted);
            String[] names = {"x", "other", "malloc", "count", "glibc", "fds"};
            for (int k = 0; k < names.length; k++) {
                line.append(' ').append(names[k]).append('=').append(java.util.Arrays.stream(samples[k])
                        .mapToObj(Long::toString).collect(java.util.stream.Collectors.joining(",")));
            }
            System.out.println(line);
            releaseLeaks();
        }

        private static void sample(long[][] samples, int r, int done) throws Exception {
            long[] m = memory();
            samples[0][r] = done;
            samples[1][r] = m[1];
            samples[2][r] = m[0];
            samples[3][r] = m[2];
            samples[4][r] = m[3];
            samples[5][r] = fds().size();
        }

        /** Runs cycles from..to-1 of {@code cycle}, on {@code threads} threads at once (cycle i on thread i % threads). */
        private static void runCycles(Cycle cycle, int from, int to, int threads) throws Exception {
            if (threads == 1) {
                for (int i = from; i < to; i++) {
                    cycle.run(i);
                }
                return;
            }
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = from + t;
                all.add(Thread.ofPlatform().name("cycles-" + t).start(() -> {
                    try {
                        for (int i = first; i < to && failures.isEmpty(); i += threads) {
                            cycle.run(i);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : all) {
                t.join();
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("a cycle failed", failures.get(0));
                failures.stream().skip(1).forEach(e::addSuppressed);
                throw e;
            }
        }

        // the leaking controls' leaks, released once a kind's figures are taken (the global arena's cannot be)
        private final List<MemorySegment> malloced = java.util.Collections.synchronizedList(new ArrayList<>());
        private final List<java.io.FileInputStream> opened = new ArrayList<>();

        private void releaseLeaks() throws IOException {
            for (MemorySegment m : malloced) {
                free(m);
            }
            malloced.clear();
            for (java.io.FileInputStream f : opened) {
                f.close();
            }
            opened.clear();
        }

        /** The control leaking FFM memory: a thread that allocates 8 bytes in the global arena and ends. */
        private void leakFfm(int i) throws Exception {
            Thread t = Thread.ofPlatform().name("leak-ffm-" + i).start(() -> Arena.global().allocate(8));
            t.join();
        }

        /** The control leaking malloc'ed memory: 100 bytes malloc'ed, kept (a verbs object's size). */
        private void leakMalloc(int i) throws Exception {
            malloced.add(malloc(100));
        }

        /** The control leaking an fd: /dev/null opened, kept open. */
        private void leakFd(int i) throws Exception {
            opened.add(new java.io.FileInputStream("/dev/null"));
        }

        /** This process's open file descriptors and what each is ({@code /proc/self/fd}). */
        private static Map<Integer, String> fds() throws IOException {
            Map<Integer, String> m = new java.util.TreeMap<>();
            try (var s = java.nio.file.Files.list(Path.of("/proc/self/fd"))) {
                for (Path p : s.toList()) {
                    String target;
                    try {
                        target = java.nio.file.Files.readSymbolicLink(p).toString();
                    } catch (IOException gone) {
                        continue; // the directory stream's own fd
                    }
                    m.put(Integer.parseInt(p.getFileName().toString()), target);
                }
            }
            return m;
        }

        interface Cycle {
            void run(int i) throws Exception;
        }

        /** Open a context and query its port. */
        private void context(int i) throws Exception {
            try (Context c = device.open()) {
                check(c.queryPort(1).state() == PortState.ACTIVE, "port 1 active");
            }
        }

        /** Allocate a PD and register a region in it. */
        private void pd(int i) throws Exception {
            try (ProtectionDomain p = rc.ctx.allocateProtectionDomain(); MemoryRegion m = p.allocate(64, RW)) {
                check(m.lkey() != 0 || m.rkey() != 0, "keys");
            }
        }

        /** Register a region (owned memory, or an automatic arena's segment every other cycle); RDMA-write from it. */
        private void mr(int i) throws Exception {
            try (MemoryRegion m = i % 2 == 0 ? rc.pd.allocate(4096, AccessFlag.LOCAL_WRITE)
                    : rc.pd.register(Arena.ofAuto().allocate(4096), AccessFlag.LOCAL_WRITE)) {
                m.segment().set(JAVA_LONG, 0, i);
                rc.a.post(sb.clear().write(i, m, 0, 8, buf.remote(), 0));
                check(rc.awaitOne(rc.cqA).isSuccess(), "write completed");
                check(buf.segment().get(JAVA_LONG, 0) == i, "written");
            }
        }

        /** Create a CQ, arm it, poll it. */
        private void cq(int i) throws Exception {
            try (CompletionQueue cq = rc.ctx.createCompletionQueue(16)) {
                cq.requestNotification(false);
                check(cq.poll(wcs) == 0, "empty");
            }
        }

        /** Create a completion channel and a CQ on it, arm, poll. */
        private void channel(int i) throws Exception {
            try (CompletionChannel ch = rc.ctx.createCompletionChannel();
                    CompletionQueue cq = rc.ctx.createCompletionQueue(16, ch, 0)) {
                cq.requestNotification(false);
                check(cq.poll(wcs) == 0, "empty");
                check(ch.fd() >= 0, "fd");
            }
        }

        /** Two RC QPs, connected, a send/receive between them. */
        private void qpRc(int i) throws Exception {
            try (QueuePair x = QueuePair.builder(rc.pd, QpType.RC).completionQueue(rc.cqA).build();
                    QueuePair y = QueuePair.builder(rc.pd, QpType.RC).completionQueue(rc.cqB).build()) {
                QpEndpoint ex = x.localEndpoint(i & 0xffff);
                QpEndpoint ey = y.localEndpoint(7);
                x.connect(ey, i & 0xffff);
                y.connect(ex, 7);
                y.postReceive(i, buf, 1024, 64);
                x.postSend(i, buf, 0, 64);
                check(rc.awaitOne(rc.cqA).isSuccess(), "send");
                WorkCompletion r = rc.awaitOne(rc.cqB);
                check(r.isSuccess() && r.wrId() == i, "receive");
            }
        }

        /** A UD QP to RTS, a send through the long-lived address handle to the long-lived UD QP. */
        private void qpUd(int i) throws Exception {
            try (QueuePair x = QueuePair.builder(ud.pd, QpType.UD).completionQueue(ud.cqA).build()) {
                x.toInit();
                x.toRtr();
                x.toRts(RtsAttributes.builder(0).build());
                udSend(x, udAh, i);
            }
        }

        /** An address handle, and a UD send through it. */
        private void ah(int i) throws Exception {
            try (AddressHandle ah = ud.pd.createAddressHandle(AddressHandle.Attributes.to(udTarget, 1, gidIndex))) {
                udSend(ud.a, ah, i);
            }
        }

        private void udSend(QueuePair from, AddressHandle ah, int i) throws Exception {
            ud.b.postReceive(i, udBuf, 0, QueuePair.UD_GRH_BYTES + 64);
            from.post(sb.clear().sendTo(i, udBuf, 2048, 64, ah, udTarget.qpn(), InitAttributes.DEFAULT_QKEY));
            check(ud.awaitOne(ud.cqA).isSuccess(), "UD send");
            WorkCompletion r = ud.awaitOne(ud.cqB);
            check(r.isSuccess() && r.wrId() == i && r.sourceQp() == from.qpNumber(), "UD receive");
        }

        /** An SRQ, a receive posted to it, a query (closed with the receive still posted). */
        private void srq(int i) throws Exception {
            try (SharedReceiveQueue s = rc.pd.createSharedReceiveQueue(16, 1, 0)) {
                s.postReceive(i, buf, 0, 64);
                check(s.outstanding() == 1 && s.query().maxWr() >= 16, "posted");
            }
        }

        /** An engine, a CQ it drives, a task on its thread and a drain of the CQ. */
        private void engine(int i) throws Exception {
            try (CompletionEngine e = CompletionEngine.builder().build();
                    CompletionQueue cq = e.createCompletionQueue(rc.ctx, 16)) {
                CompletableFuture.runAsync(() -> { }, e).get(60, TimeUnit.SECONDS);
                e.drainAsync(cq).get(60, TimeUnit.SECONDS);
            }
        }

        /** The control: a platform thread started and joined (no rdma4j object). */
        private void thread(int i) throws Exception {
            Thread t = Thread.ofPlatform().name("control-" + i).start(() -> { });
            t.join();
        }

        /** An RdmaServer, a client connection over rdma_cm, one message each way... one way, then all closed. */
        private void net(int i) throws Exception {
            RdmaOptions o = RdmaOptions.builder().exchange(RdmaOptions.Exchange.RDMA_CM).timeout(Duration.ofSeconds(60))
                    .build();
            // port 0: fixed ports would meet the clients' ephemeral ones (EADDRINUSE) with four cycles at once
            InetSocketAddress address = new InetSocketAddress(rc.ctx.bestRoceGid(1).gid().ipv4().orElseThrow(), 0);
            try (RdmaServer server = RdmaServer.listen(address, o)) {
                CompletableFuture<RdmaConnection> accepted = server.acceptAsync();
                try (RdmaConnection c = RdmaClient.connect(server.localAddress(), o);
                        RdmaConnection s = accepted.get(60, TimeUnit.SECONDS)) {
                    c.send(("m" + i).getBytes(StandardCharsets.US_ASCII));
                    try (Message m = s.receive(Duration.ofSeconds(60))) {
                        check(new String(m.bytes(), StandardCharsets.US_ASCII).equals("m" + i), "message");
                    }
                }
            }
        }

        private static void check(boolean ok, String what) {
            if (!ok) {
                throw new AssertionError(what);
            }
        }

        /** Lets the GC free unreachable arenas (Arena.ofAuto) and their cleaners run before a measurement. */
        private static void settle() throws InterruptedException {
            long t = System.nanoTime();
            for (int k = 0; k < 2; k++) {
                System.gc();
                Thread.sleep(20);
            }
            settleNanos += System.nanoTime() - t;
        }

        private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private static long cyclesNanos;
        private static long probeNanos;
        private static long settleNanos;

        private static String format(Map<String, Long> m) {
            StringBuilder b = new StringBuilder();
            m.forEach((k, v) -> b.append(b.isEmpty() ? "" : ",").append(k).append('=').append(v));
            return b.toString();
        }

        /** The kernel's object counts of the test device: {@code rdma -j resource show}. */
        private Map<String, Long> rxeCounts() throws IOException, InterruptedException {
            Process p = new ProcessBuilder("rdma", "-j", "resource", "show").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            check(p.waitFor() == 0, "rdma -j resource show: " + out);
            Matcher dev = Pattern.compile("\\{[^}]*\"ifname\":\"" + Pattern.quote(device.name()) + "\"[^}]*}")
                    .matcher(out);
            check(dev.find(), "no " + device.name() + " in: " + out);
            Map<String, Long> m = new LinkedHashMap<>();
            Matcher kv = Pattern.compile("\"(\\w+)\":(\\d+)").matcher(dev.group());
            while (kv.find()) {
                if (!kv.group(1).equals("ifindex")) {
                    m.put(kv.group(1), Long.parseLong(kv.group(2)));
                }
            }
            check(m.containsKey("qp") && m.containsKey("pd"), "counts in: " + out);
            return m;
        }

        /**
         * In bytes: NMT's malloc total, its category "Other" (where the memory of FFM arenas is counted), its malloc
         * count, and glibc's in-use bytes. The JVM's own threads (the compiler's arenas) malloc and free megabytes
         * at a time, so a reading counts only when glibc's figure did not move across NMT's (else it is taken again).
         */
        private static long[] memory() throws Exception {
            for (int attempt = 0;; attempt++) {
                long g1 = mallocInUse();
                long[] n = nmtSummary();
                long g2 = mallocInUse();
                if (Math.abs(g2 - g1) <= 4096 || attempt == 50) {
                    return new long[] {n[0], n[1], n[2], g1};
                }
                Thread.sleep(20);
            }
        }

        /** NMT's {@code VM.native_memory summary} of this JVM, through its diagnostic command: malloc, Other, count. */
        private static long[] nmtSummary() throws Exception {
            String out = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary", "scale=1"}}, new String[] {String[].class.getName()});
            Matcher m = Pattern.compile("malloc: (\\d+) #(\\d+)").matcher(out);
            check(m.find(), "no malloc total in NMT's summary: " + out);
            Matcher other = Pattern.compile("-\\s+Other \\(reserved=\\d+, committed=(\\d+)\\)").matcher(out);
            return new long[] {Long.parseLong(m.group(1)), other.find() ? Long.parseLong(other.group(1)) : 0,
                    Long.parseLong(m.group(2))};
        }

        @SuppressWarnings("restricted")
        private static final MethodHandle MALLOC = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("malloc").orElseThrow(),
                FunctionDescriptor.of(java.lang.foreign.ValueLayout.ADDRESS, JAVA_LONG));

        @SuppressWarnings("restricted")
        private static final MethodHandle FREE = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("free").orElseThrow(),
                FunctionDescriptor.ofVoid(java.lang.foreign.ValueLayout.ADDRESS));

        private static MemorySegment malloc(long bytes) {
            try {
                return (MemorySegment) MALLOC.invokeExact(bytes);
            } catch (Throwable t) {
                throw new AssertionError("malloc", t);
            }
        }

        private static void free(MemorySegment m) {
            try {
                FREE.invokeExact(m);
            } catch (Throwable t) {
                throw new AssertionError("free", t);
            }
        }

        @SuppressWarnings("restricted")
        private static final MethodHandle MALLINFO2 = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("mallinfo2").orElseThrow(),
                FunctionDescriptor.of(MemoryLayout.structLayout(MemoryLayout.sequenceLayout(10, JAVA_LONG))));

        /** glibc's bytes in use: {@code mallinfo2()}'s {@code uordblks + hblkhd} (all arenas, and mmapped chunks). */
        private static long mallocInUse() {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment mi = (MemorySegment) MALLINFO2.invokeExact((SegmentAllocator) a);
                return mi.get(JAVA_LONG, 7 * 8) + mi.get(JAVA_LONG, 4 * 8);
            } catch (Throwable t) {
                throw new AssertionError("mallinfo2", t);
            }
        }
    }
}
