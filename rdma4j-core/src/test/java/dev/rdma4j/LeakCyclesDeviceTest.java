package dev.rdma4j;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
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
 * Issue 12, leaks: cycles of create / use / close of every kind of object, in a child JVM started with
 * {@code -XX:NativeMemoryTracking=summary}; after each kind's cycles, the open file descriptors
 * ({@code /proc/self/fd}), the kernel's rxe object counts ({@code rdma -j resource show}: pd, cq, qp, mr, srq,
 * cm_id, ctx) and the native memory are back at their level before the cycles.
 *
 * <p>Native memory is measured in two parts, both with a tolerance: NMT's category "Other", where the JVM counts
 * the memory of FFM arenas (rdma4j's own native memory), and what native code outside the JVM has malloc'ed
 * (libibverbs, librdmacm, the rxe provider), which NMT cannot see: glibc's in-use bytes ({@code mallinfo2()}) less
 * NMT's malloc total. NMT's malloc total itself (the JVM's own: compiler arenas, symbols, class metadata) moves by
 * megabytes either way without any leak; it is printed, not asserted. Fds and the kernel's counts must be exactly
 * back. The tolerances are fixed, not per cycle (see {@link #FFM_TOLERANCE_KB}, {@link #NATIVE_TOLERANCE_KB}).
 * The child runs at the test JVM's leak detector level ({@code paranoid} in the build) and must report no leak.
 *
 * <p>How many cycles: 10,000 of each kind, as issue 12 asks. That fits the suite's budget since two fixes made the
 * cycles cheap in the emulated guest (2026-11-24): the GID table is one {@code ibv_query_gid_table} call instead of
 * 1,024 queries of which 1,022 threw (an RC pair's cycle went from 224 to 15 ms), and contexts librdmacm hands out no
 * longer list every device. The connection kind runs four cycles at a time ({@link #PARALLEL}). Each kind first runs
 * warm-up cycles (class loading, the JIT, librdmacm's lazily opened device context, glibc's per-thread arenas), then
 * the measured cycles.
 *
 * <p>The first kind, {@code thread}, is a control with no rdma4j object: a Java thread started and joined. It leaves
 * some 25 bytes per thread in glibc's heap that NMT does not see (the JVM's or glibc's, not rdma4j's); the kinds that
 * start threads (an engine's, a connection's engine) are allowed that much per thread started on the native figure.
 * The 10,000 engine cycles found a real leak: Libc's per-thread errno slot was allocated in the global arena, one
 * kept forever per thread that ever made a Libc call (NMT Other grew 8 bytes per engine; now an automatic arena).
 */
@Tag("device")
class LeakCyclesDeviceTest {

    /**
     * Cycles per kind (the class comment says why); {@code -Drdma4j.leakCycles=} or {@code RDMA4J_LEAK_CYCLES=} in
     * the environment ({@code kind=count,...}) run others, e.g. fewer for a quick look; the control kind
     * {@code thread} always runs first (2,000 unless given).
     */
    static final Map<String, Integer> CYCLES = cycles(System.getProperty("rdma4j.leakCycles",
            System.getenv("RDMA4J_LEAK_CYCLES") != null ? System.getenv("RDMA4J_LEAK_CYCLES")
                    : "context=10000,pd=10000,mr=10000,cq=10000,channel=10000,qp-rc=10000,qp-ud=10000,ah=10000,"
                    + "srq=10000,engine=10000,net=10000"));

    /**
     * Kinds whose cycles run on several threads at once: a connection's set-up is mostly waiting (rdma_cm's
     * exchanges, the engine threads' hand-offs), so four at a time take about half as long as one after another;
     * the kinds that share the fixture's CQs run one at a time.
     */
    static final Map<String, Integer> PARALLEL = Map.of("net", 4);

    /**
     * Tolerance of NMT's "Other" category (where FFM arenas, rdma4j's native memory, are counted), in KiB, for
     * rounding and the JDK's own use of it: each rdma4j object allocates at least one arena of its own, so a leak of
     * one object per cycle is far beyond it.
     */
    static final long FFM_TOLERANCE_KB = 64;

    /**
     * Tolerance of the bytes malloc'ed by native code outside the JVM (libibverbs, librdmacm, the rxe provider,
     * glibc itself), in KiB: glibc's in-use bytes ({@code mallinfo2}) less NMT's malloc total. A leaked
     * {@code ibv_pd}, {@code ibv_mr}, {@code ibv_cq}, ... is a {@code malloc} of 100 bytes or more, so a leak of one
     * object per cycle exceeds it after some 1,000 cycles; for the kinds run fewer times, the kernel's counts (exact)
     * catch what a cycle's object would leak in the kernel.
     *
     * <p>The JVM's own malloc total (NMT) is printed and not asserted: it moves by megabytes either way without any
     * leak (the compiler's arenas, freed in bulk every few seconds, symbol and class metadata).
     */
    static final long NATIVE_TOLERANCE_KB = 128;

    private static Map<String, Integer> cycles(String spec) {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("thread", 2000); // the control, first
        for (String kv : spec.split(",")) {
            String[] p = kv.split("=");
            m.put(p[0].trim(), Integer.parseInt(p[1].trim()));
        }
        return m;
    }

    /** One kind's figures, as the child prints them (native memory in KiB). */
    record Result(String kind, int cycles, long millis, long fdsBefore, long fdsAfter, Map<String, Long> rxeBefore,
            Map<String, Long> rxeAfter, long ffmBefore, long ffmAfter, long nativeBefore, long nativeAfter,
            long jvmBefore, long jvmAfter, long threads) {
        static Result parse(String line) {
            String[] f = line.trim().split(" ");
            return new Result(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                    Long.parseLong(f[5]), counts(f[6]), counts(f[7]), Long.parseLong(f[8]), Long.parseLong(f[9]),
                    Long.parseLong(f[10]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
                    Long.parseLong(f[14]));
        }

        private static Map<String, Long> counts(String s) {
            Map<String, Long> m = new LinkedHashMap<>();
            for (String kv : s.split(",")) {
                String[] p = kv.split("=");
                m.put(p[0], Long.parseLong(p[1]));
            }
            return m;
        }

        String row() {
            return String.format("| %s | %d | %.1f | %d → %d | %s | %s | %d → %d | %d → %d | %d | %d → %d |", kind,
                    cycles, (double) millis / cycles, fdsBefore, fdsAfter, compact(rxeBefore),
                    rxeAfter.equals(rxeBefore) ? "same" : compact(rxeAfter), ffmBefore, ffmAfter, nativeBefore,
                    nativeAfter, threads, jvmBefore, jvmAfter);
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
        System.out.println("leak cycles: " + seconds + " s in all (a child JVM with NMT); before → after the cycles;"
                + " memory in KiB");
        System.out.println("| kind | cycles | ms/cycle | open fds | rxe objects (kernel) before | after |"
                + " NMT Other (FFM) | malloc outside the JVM | threads started | NMT malloc (JVM, not asserted) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        results.forEach(r -> System.out.println(r.row()));
        child.output().lines().filter(l -> l.startsWith("fds of ") || l.startsWith("child time:"))
                .forEach(System.out::println);
        assertThat(results.stream().map(Result::kind).toList()).as("kinds run; output:%n%s", child.output())
                .containsExactlyElementsOf(CYCLES.keySet());
        // the control: what a Java thread started and ended leaves in glibc's heap outside NMT's view (the JVM's or
        // glibc's, no rdma4j object involved); a kind that starts threads (the engine's) is allowed that much per thread
        Result control = results.get(0);
        assertThat(control.kind()).isEqualTo("thread");
        double perThreadKb = Math.max(0, control.nativeAfter() - control.nativeBefore()) / (double) control.threads();
        System.out.printf("control: %d threads started and ended left %+d KiB malloc'ed outside the JVM (%.0f bytes"
                + " each), allowed per thread to the kinds that start threads%n", control.threads(),
                control.nativeAfter() - control.nativeBefore(), perThreadKb * 1024);
        for (Result r : results) {
            assertThat(r.cycles()).isEqualTo(CYCLES.get(r.kind()));
            assertThat(r.fdsAfter()).as("%s: open fds after %d cycles", r.kind(), r.cycles()).isEqualTo(r.fdsBefore());
            assertThat(r.rxeAfter()).as("%s: the kernel's rxe objects after %d cycles", r.kind(), r.cycles())
                    .isEqualTo(r.rxeBefore());
            assertThat(r.ffmAfter() - r.ffmBefore()).as("%s: NMT Other (FFM) KiB growth after %d cycles", r.kind(),
                    r.cycles()).isLessThanOrEqualTo(FFM_TOLERANCE_KB);
            if (r != control) {
                long allowed = NATIVE_TOLERANCE_KB + (long) Math.ceil(1.5 * perThreadKb * r.threads());
                assertThat(r.nativeAfter() - r.nativeBefore())
                        .as("%s: KiB malloc'ed outside the JVM, growth after %d cycles (%d threads started)", r.kind(),
                                r.cycles(), r.threads())
                        .isLessThanOrEqualTo(allowed);
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
            nmtKb();
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
                default -> throw new IllegalArgumentException(kind);
            };
            // warm-up: 100 cycles (10% of them, at least 3, for the slow kinds), enough for glibc's per-thread malloc
            // arenas (the engine's thread) to reach their working size
            for (int i = 0, w = n >= 200 ? 100 : Math.max(3, n / 10); i < w; i++) {
                cycle.run(i);
            }
            settle();
            long p0 = System.nanoTime();
            Map<Integer, String> fds = fds();
            Map<String, Long> rxe = rxeCounts();
            long[] nmt = nmtKb();
            long probes = System.nanoTime() - p0;
            long started = THREADS.getTotalStartedThreadCount();
            long t0 = System.nanoTime();
            runCycles(cycle, n, PARALLEL.getOrDefault(kind, 1));
            long cycling = System.nanoTime() - t0;
            long threadsStarted = THREADS.getTotalStartedThreadCount() - started - (PARALLEL.getOrDefault(kind, 1) > 1
                    ? PARALLEL.get(kind) : 0);
            long millis = TimeUnit.NANOSECONDS.toMillis(cycling);
            settle();
            p0 = System.nanoTime();
            Map<Integer, String> fdsAfter = fds();
            long[] nmtAfter = nmtKb();
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
            // the figures: fds, the kernel's counts, NMT's "Other" (FFM memory), the malloc'ed bytes of native code
            // outside the JVM (glibc's in-use bytes less NMT's malloc total)
            System.out.println("RESULT " + kind + " " + n + " " + millis + " " + fds.size() + " " + fdsAfter.size() + " "
                    + format(rxe) + " " + format(rxeAfter) + " " + nmt[1] + " " + nmtAfter[1] + " " + nmt[2] + " "
                    + nmtAfter[2] + " " + nmt[0] + " " + nmtAfter[0] + " " + threadsStarted);
        }

        /** Runs cycles 0..n-1 of {@code cycle}, on {@code threads} threads at once (cycle i on thread i % threads). */
        private static void runCycles(Cycle cycle, int n, int threads) throws Exception {
            if (threads == 1) {
                for (int i = 0; i < n; i++) {
                    cycle.run(i);
                }
                return;
            }
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                all.add(Thread.ofPlatform().name("cycles-" + t).start(() -> {
                    try {
                        for (int i = first; i < n && failures.isEmpty(); i += threads) {
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
                e.drained(cq).get(60, TimeUnit.SECONDS);
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
         * In KiB: NMT's malloc total and its category "Other" (where the memory of FFM arenas is counted), and the
         * bytes malloc'ed outside the JVM: glibc's in-use bytes less NMT's malloc total. The JVM's own threads (the
         * compiler's arenas) malloc and free megabytes at a time, so a reading counts only when glibc's figure did not
         * move across NMT's (else it is taken again).
         */
        private static long[] nmtKb() throws Exception {
            for (int attempt = 0;; attempt++) {
                long g1 = mallocInUseKb();
                long[] n = nmtSummaryKb();
                long g2 = mallocInUseKb();
                if (Math.abs(g2 - g1) <= 16 || attempt == 50) {
                    return new long[] {n[0], n[1], g1 - n[0]};
                }
                Thread.sleep(20);
            }
        }

        /** NMT's {@code VM.native_memory summary} of this JVM, through its diagnostic command: malloc, Other. */
        private static long[] nmtSummaryKb() throws Exception {
            String out = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary", "scale=KB"}}, new String[] {String[].class.getName()});
            Matcher m = Pattern.compile("malloc: (\\d+)KB").matcher(out);
            check(m.find(), "no malloc total in NMT's summary: " + out);
            Matcher other = Pattern.compile("-\\s+Other \\(reserved=\\d+KB, committed=(\\d+)KB\\)").matcher(out);
            return new long[] {Long.parseLong(m.group(1)), other.find() ? Long.parseLong(other.group(1)) : 0};
        }

        @SuppressWarnings("restricted")
        private static final MethodHandle MALLINFO2 = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("mallinfo2").orElseThrow(),
                FunctionDescriptor.of(MemoryLayout.structLayout(MemoryLayout.sequenceLayout(10, JAVA_LONG))));

        /** glibc's bytes in use, KiB: {@code mallinfo2()}'s {@code uordblks + hblkhd} (all arenas, and mmapped chunks). */
        private static long mallocInUseKb() {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment mi = (MemorySegment) MALLINFO2.invokeExact((SegmentAllocator) a);
                return (mi.get(JAVA_LONG, 7 * 8) + mi.get(JAVA_LONG, 4 * 8)) / 1024;
            } catch (Throwable t) {
                throw new AssertionError("mallinfo2", t);
            }
        }
    }
}
