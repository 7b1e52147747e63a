package dev.rdma4j;

import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import dev.rdma4j.engine.WorkRequestException;
import dev.rdma4j.engine.WorkRequestTimeoutException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The misuse fuzzer of issue 12, run by {@link MisuseFuzzDeviceTest} in a child JVM (a crash is observed, not
 * suffered): a jqwik property whose every try is a random sequence of public API calls with random arguments
 * on one world of verbs objects (two protection domains, regions, CQs, RC/UC/UD queue pairs in random states,
 * an SRQ, address handles, batches, an engine and its {@link AsyncQueuePair}s): closed objects, wrong QP
 * states, out-of-range sizes and offsets, too many SGEs or WRs, oversize inline data, foreign PDs and regions,
 * and {@code close()} racing posts and polls from virtual and platform threads.
 *
 * <p>The property: every call returns, or throws one of the documented exceptions ({@link #documented}); the
 * futures of {@link AsyncQueuePair} complete with a completion or one of them. A call that outlives the step
 * deadline is a hang: the child prints every thread's stack and halts with exit status 3. Not a test class
 * (its name keeps Surefire and the device-test scan away from it): {@link Main} ({@code seed tries stepDeadlineSeconds})
 * runs the property with that seed through the JUnit Platform and prints {@code misuse fuzz: seed S, T tries,
 * N calls, R refused}.
 */
final class MisuseFuzz {
    static final String SEED = "rdma4j.fuzz.seed";
    static final String TRIES = "rdma4j.fuzz.tries";
    static final String STEP_DEADLINE = "rdma4j.fuzz.stepDeadlineSeconds";

    /** Public API calls made, and how many of them threw a documented exception. */
    static final AtomicLong CALLS = new AtomicLong();
    static final AtomicLong REFUSED = new AtomicLong();
    static final AtomicLong TRIES_RUN = new AtomicLong();

    /**
     * The exceptions the API documents for misuse and for what a device may do: {@link IllegalStateException}
     * (closed, closing, busy or wrong state), {@link IllegalArgumentException} (a value out of range),
     * {@link VerbsException} (the verb or rdma4j's pre-check refused, with the errno), {@link WorkRequestException}
     * (a completion's error status), {@link WorkRequestTimeoutException} (a blocking call's deadline). Not
     * {@code RejectedExecutionException} any more (issue 29): only {@code CompletionEngine.execute} and
     * {@code drained} document it, the fuzzer calls neither, and {@code createCompletionQueue}, {@code watch} or
     * {@code wrap} racing the engine's close now throw {@link IllegalStateException}, as after it.
     */
    static boolean documented(Throwable t) {
        return t instanceof IllegalStateException || t instanceof IllegalArgumentException
                || t instanceof VerbsException || t instanceof WorkRequestException
                || t instanceof WorkRequestTimeoutException;
    }

    /** The child JVM's entry: {@code seed tries stepDeadlineSeconds}; exit 0 when the property held. */
    public static final class Main {
        private Main() {
        }

        public static void main(String[] args) {
            run(args);
        }
    }

    static void run(String[] args) {
        System.setProperty(SEED, args[0]);
        System.setProperty(TRIES, args[1]);
        System.setProperty(STEP_DEADLINE, args[2]);
        Watchdog.start(Long.parseLong(args[2]));
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(org.junit.platform.engine.discovery.DiscoverySelectors.selectClass(MisuseFuzz.class))
                .build(), listener);
        TestExecutionSummary s = listener.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        s.printFailuresTo(out, 40);
        boolean ok = s.getTotalFailureCount() == 0 && s.getTestsSucceededCount() == 1;
        out.printf("misuse fuzz: seed %s, %d tries, %d calls, %d refused with documented exceptions: %s%n", args[0],
                TRIES_RUN.get(), CALLS.get(), REFUSED.get(), ok ? "ok" : "FAILED");
        out.flush();
        System.exit(ok ? 0 : 1);
    }

    /** Sets the seed and the tries from the system properties {@link #main} set. */
    static final class FromSystemProperties implements AroundPropertyHook {
        @Override
        public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
            String seed = System.getProperty(SEED);
            if (seed != null) {
                context.attributes().setSeed(seed);
                context.attributes().setTries(Integer.valueOf(System.getProperty(TRIES)));
            }
            return property.execute();
        }
    }

    // ------------------------------------------------------------------ the property

    @Property(tries = 10, shrinking = ShrinkingMode.OFF, afterFailure = AfterFailureMode.RANDOM_SEED)
    @AddLifecycleHook(FromSystemProperties.class)
    void everyMisuseIsRefusedInTheContract(@ForAll("steps") List<Step> steps) {
        long t = TRIES_RUN.incrementAndGet();
        List<String> failures = new ArrayList<>();
        try (World w = new World(failures)) {
            for (int i = 0; i < steps.size(); i++) {
                Step s = steps.get(i);
                Watchdog.begin("try " + t + " step " + i + ": " + s);
                w.run(s);
            }
            Watchdog.begin("try " + t + ": closing the world");
        }
        Watchdog.end();
        if (!failures.isEmpty()) {
            throw new AssertionError("try " + t + ": " + failures.size() + " undocumented outcome(s):\n"
                    + String.join("\n", failures) + "\nsteps: " + steps);
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Long> longs = Arbitraries.oneOf(
                Arbitraries.of(0L, -1L, 1L, 7L, 8L, 63L, 64L, 4088L, 4092L, 4095L, 4096L, 4097L, 65536L,
                        (long) Integer.MAX_VALUE, 1L << 32, Long.MAX_VALUE, Long.MIN_VALUE),
                Arbitraries.longs().between(-16, 5000));
        Arbitrary<Integer> ints = Arbitraries.oneOf(
                Arbitraries.of(0, -1, 1, 2, 3, 8, 16, 31, 32, 33, 64, 255, 256, 1024, 1025, 4096, 65536, 65537,
                        Integer.MAX_VALUE, Integer.MIN_VALUE),
                Arbitraries.integers().between(-4, 300));
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 1 << 16);
        // closing comes rarely (it ends everything after it), encoding, posting and polling often
        List<net.jqwik.api.Tuple.Tuple2<Integer, Op>> weights = new ArrayList<>();
        for (Op o : Op.values()) {
            weights.add(net.jqwik.api.Tuple.of(switch (o) {
                case CLOSE -> 1;
                case RACE -> 2;
                case ENCODE_SEND, ENCODE_RECEIVE, POST_SEND, POST_RECEIVE, POST_SHORTCUT, POLL, ASYNC -> 6;
                default -> 3;
            }, o));
        }
        Arbitrary<Op> ops = Arbitraries.frequency(weights);
        Arbitrary<Step> step = Combinators.combine(ops, pick, pick, ints, longs, longs).as(Step::new);
        return step.list().ofMinSize(8).ofMaxSize(40);
    }

    /** One call (or a small group of calls) of the public API: {@code a}, {@code b} pick, {@code n}, {@code x}, {@code y} size. */
    record Step(Op op, int a, int b, int n, long x, long y) {
    }

    enum Op {
        PD, REGION, REGISTER, CQ, CQ_WITH_CHANNEL, QP, QP_INIT, QP_RTR, QP_RTS, QP_ERROR, QP_RESET, QP_QUERY, SRQ,
        SRQ_ARM, SRQ_RESIZE, SRQ_POST, AH, SEND_BATCH, RECEIVE_BATCH, ENCODE_SEND, ENCODE_RECEIVE,
        POST_SEND, POST_RECEIVE, POST_SHORTCUT, POLL, AWAIT, CLOSE, ENGINE, WRAP, ASYNC, BLOCKING, RACE, WINDOW,
        WINDOW_BIND
    }

    // ------------------------------------------------------------------ the world

    /** Every object a try made; each step picks among them by index (a closed one too). */
    static final class World implements AutoCloseable {
        private final List<String> failures;
        private final Context ctx;
        private final List<ProtectionDomain> pds = new ArrayList<>();
        private final List<MemoryRegion> regions = new ArrayList<>();
        private final List<CompletionQueue> cqs = new ArrayList<>();
        private final List<CompletionChannel> channels = new ArrayList<>();
        private final List<QueuePair> qps = new ArrayList<>();
        private final List<SharedReceiveQueue> srqs = new ArrayList<>();
        private final List<AddressHandle> ahs = new ArrayList<>();
        private final List<MemoryWindow> windows = new ArrayList<>();
        private final List<SendBatch> sends = new ArrayList<>();
        private final List<ReceiveBatch> receives = new ArrayList<>();
        private final List<WorkCompletions> wcss = new ArrayList<>();
        private final List<AsyncQueuePair> aqs = new ArrayList<>();
        private final List<CompletableFuture<WorkCompletion>> futures = new ArrayList<>();
        private CompletionEngine engine;
        /** A view an engine handler kept past its call (written on the engine thread): reading it must be refused. */
        private volatile dev.rdma4j.engine.CompletionView keptView;

        World(List<String> failures) {
            this.failures = failures;
            try {
                ctx = TestDevice.device().open();
                pds.add(ctx.allocateProtectionDomain());
                pds.add(ctx.allocateProtectionDomain());
                regions.add(pds.get(0).allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE,
                        AccessFlag.REMOTE_READ, AccessFlag.REMOTE_ATOMIC));
                regions.add(pds.get(1).allocate(4096, AccessFlag.LOCAL_WRITE));
                regions.add(pds.get(0).allocate(64));
                cqs.add(ctx.createCompletionQueue(32));
                sends.add(new SendBatch(4, 2, 64));
                receives.add(new ReceiveBatch(4, 2));
                wcss.add(new WorkCompletions(8));
                qps.add(QueuePair.builder(pds.get(0), QpType.RC).completionQueue(cqs.get(0)).build());
                // and queue pairs that work, so that posts also succeed and complete: an RC pair connected to
                // each other (short retries: a send to a closed peer fails soon), a UD QP and an address handle
                // to this port
                cqs.add(ctx.createCompletionQueue(64));
                QueuePair a = QueuePair.builder(pds.get(0), QpType.RC).completionQueue(cqs.get(1)).extendedPosting()
                        .build();
                QueuePair b = QueuePair.builder(pds.get(0), QpType.RC).completionQueue(cqs.get(1)).build();
                qps.add(a);
                qps.add(b);
                QpEndpoint ea = a.localEndpoint(1);
                QpEndpoint eb = b.localEndpoint(2);
                a.toInit();
                b.toInit();
                a.toRtr(RtrAttributes.builder(eb).build());
                b.toRtr(RtrAttributes.builder(ea).build());
                a.toRts(RtsAttributes.builder(1).timeout(8).retryCount(1).rnrRetry(1).build());
                b.toRts(RtsAttributes.builder(2).timeout(8).retryCount(1).rnrRetry(1).build());
                QueuePair ud = QueuePair.builder(pds.get(0), QpType.UD).completionQueue(cqs.get(1)).build();
                qps.add(ud);
                ud.toInit();
                ud.toRtr();
                ud.toRts(RtsAttributes.builder(0).build());
                ahs.add(pds.get(0).createAddressHandle(AddressHandle.Attributes.to(ud.localEndpoint(0), 1,
                        ctx.bestRoceGid(1).index())));
                srqs.add(pds.get(1).createSharedReceiveQueue(16, 2, 0));
                regions.add(pds.get(0).allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ,
                        AccessFlag.MW_BIND));
                windows.add(pds.get(0).allocateWindow(MemoryWindow.Type.TYPE_2));
                windows.add(pds.get(0).allocateWindow(MemoryWindow.Type.TYPE_1));
            } catch (VerbsException e) {
                throw new AssertionError("the world of a try could not be made", e);
            }
        }

        private static <T> T pick(List<T> l, int i) {
            return l.isEmpty() ? null : l.get(Math.floorMod(i, l.size()));
        }

        private static int clampInt(long v) {
            return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
        }

        @FunctionalInterface
        interface Call {
            void run() throws Exception;
        }

        /** Makes one call: a documented exception is a refusal, anything else a failure of the property. */
        void call(String what, Call c) {
            CALLS.incrementAndGet();
            try {
                c.run();
            } catch (Throwable t) {
                check(what, t);
            }
        }

        void check(String what, Throwable t) {
            if (t instanceof ExecutionException || t instanceof CompletionException) {
                if (t.getCause() != null) {
                    t = t.getCause();
                }
            }
            if (documented(t)) {
                REFUSED.incrementAndGet();
                if (t.getMessage() == null || t.getMessage().isBlank()) {
                    fail(what, t, "a documented exception without a message");
                }
                return;
            }
            fail(what, t, "undocumented exception");
        }

        synchronized void fail(String what, Throwable t, String why) {
            java.io.StringWriter sw = new java.io.StringWriter();
            t.printStackTrace(new PrintWriter(sw));
            String line = what + ": " + why + ": " + sw;
            failures.add(line);
            System.out.println("FUZZ FAILURE " + line);
        }

        private MemorySegment data(int n) {
            int size = Math.floorMod(n, 300);
            return MemorySegment.ofArray(new byte[size]);
        }

        private RemoteRegion remote(Step s) {
            MemoryRegion r = pick(regions, s.b());
            if (r != null && (s.a() & 3) != 0) {
                return r.remote();
            }
            return new RemoteRegion(s.x() & ~7L, Math.floorMod(s.y(), 1 << 16), s.n());
        }

        void run(Step s) {
            MemoryRegion mr = pick(regions, s.b());
            QueuePair qp = pick(qps, s.a());
            int len = clampInt(s.y());
            switch (s.op()) {
                case PD -> call("allocateProtectionDomain", () -> pds.add(ctx.allocateProtectionDomain()));
                case REGION -> {
                    ProtectionDomain pd = pick(pds, s.a());
                    long size = (s.b() & 1) == 0 ? s.x() : Math.floorMod(s.x(), 1 << 16);
                    call("allocate(" + size + ")", () -> regions.add(pd.allocate(size, flags(s.n()))));
                }
                case REGISTER -> {
                    ProtectionDomain pd = pick(pds, s.a());
                    long size = Math.floorMod(s.x(), 1 << 14) + 1;
                    MemorySegment seg = switch (s.b() & 3) {
                        case 0 -> Arena.ofAuto().allocate(size, 64);
                        case 1 -> Arena.ofAuto().allocate(size, 64).asReadOnly();
                        case 2 -> MemorySegment.ofArray(new byte[(int) size]);
                        default -> Arena.ofShared().allocate(size, 64); // a closeable arena: refused
                    };
                    call("register", () -> regions.add((s.b() & 4) == 0 ? pd.register(seg, flags(s.n()))
                            : pd.register(seg.asSlice(0, Math.floorMod(s.y(), size + 1)), flags(s.n()))));
                }
                case CQ -> call("createCompletionQueue(" + s.n() + ")", () -> cqs.add((s.a() & 1) == 0
                        ? ctx.createCompletionQueue(s.n())
                        : ctx.createExtendedCompletionQueue(s.n(), null, 0, (s.a() & 2) != 0)));
                case CQ_WITH_CHANNEL -> call("createCompletionQueue with a channel", () -> {
                    CompletionChannel ch = pick(channels, s.a());
                    if (ch == null || (s.b() & 1) == 0) {
                        ch = ctx.createCompletionChannel();
                        channels.add(ch);
                    }
                    cqs.add(ctx.createCompletionQueue(Math.floorMod(s.n(), 64), ch, s.b() & 3));
                });
                case QP -> {
                    ProtectionDomain pd = pick(pds, s.a());
                    CompletionQueue cq = pick(cqs, s.b());
                    QpType type = QpType.values()[Math.floorMod(s.n(), QpType.values().length)];
                    call("QueuePair.build " + type, () -> {
                        QueuePairBuilder b = QueuePair.builder(pd, type).completionQueue(cq);
                        if ((s.b() & 2) != 0) {
                            b.capacity(clampInt(s.x() % 300), clampInt(s.y() % 300));
                        }
                        if ((s.b() & 4) != 0) {
                            b.maxSge(Math.floorMod(s.x(), 40) - 2, Math.floorMod(s.y(), 40) - 2);
                        }
                        if ((s.b() & 8) != 0) {
                            b.maxInlineData(clampInt(s.y()));
                        }
                        if ((s.b() & 16) != 0 && !srqs.isEmpty()) {
                            b.sharedReceiveQueue(pick(srqs, s.a()));
                        }
                        b.signalAll((s.b() & 32) != 0);
                        qps.add(b.build());
                    });
                }
                case QP_INIT -> call("toInit", () -> {
                    if ((s.b() & 1) == 0) {
                        qp.toInit();
                    } else {
                        qp.toInit(InitAttributes.builder().port(s.n()).qkey(clampInt(s.x()))
                                .access(flags(s.b() >> 1)).build());
                    }
                });
                case QP_RTR -> {
                    QueuePair peer = pick(qps, s.b());
                    call("toRtr", () -> {
                        if (qp.type() == QpType.UD) {
                            qp.toRtr();
                        } else {
                            QpEndpoint e = peer.localEndpoint(clampInt(s.x()));
                            RtrAttributes.Builder r = RtrAttributes.builder(e);
                            if ((s.b() & 1) != 0) {
                                r.maxDestRdAtomic(s.n()).minRnrTimer(clampInt(s.y()));
                            }
                            qp.toRtr(r.build());
                        }
                    });
                }
                case QP_RTS -> call("toRts", () -> {
                    RtsAttributes.Builder r = RtsAttributes.builder(clampInt(s.x()));
                    if ((s.b() & 1) != 0) {
                        r.timeout(s.n()).retryCount(clampInt(s.y())).rnrRetry(s.n()).maxRdAtomic(clampInt(s.y()));
                    } else {
                        r.timeout(1).retryCount(1).rnrRetry(1); // short: a send to nobody fails soon
                    }
                    qp.toRts(r.build());
                });
                case QP_ERROR -> call("toError", qp::toError);
                case QP_RESET -> call("reset", qp::reset);
                case QP_QUERY -> call("query", () -> {
                    qp.query();
                    qp.outstandingReceives();
                    qp.state();
                });
                case SRQ -> call("createSharedReceiveQueue", () -> srqs.add(pick(pds, s.a())
                        .createSharedReceiveQueue(s.n(), Math.floorMod(s.x(), 40) - 2, clampInt(s.y()))));
                case SRQ_ARM -> {
                    if (!srqs.isEmpty()) {
                        call("armLimit", () -> pick(srqs, s.a()).armLimit(s.n()));
                    }
                }
                case SRQ_RESIZE -> {
                    if (!srqs.isEmpty()) {
                        call("resize", () -> pick(srqs, s.a()).resize(s.n()));
                    }
                }
                case SRQ_POST -> call("srq post", () -> {
                    SharedReceiveQueue srq = pick(srqs, s.a());
                    if (srq == null) {
                        return;
                    }
                    if ((s.n() & 1) == 0) {
                        srq.postReceive(s.b(), mr, s.x(), len);
                    } else {
                        srq.tryPost(pick(receives, s.n() >> 1));
                    }
                });
                case AH -> call("createAddressHandle", () -> {
                    Gid dgid = (s.b() & 1) == 0 ? Gid.ZERO : ctx.bestRoceGid(1).gid();
                    ahs.add(pick(pds, s.a()).createAddressHandle(new AddressHandle.Attributes(
                            (s.b() & 2) == 0 ? 1 : s.n(), clampInt(s.x()) & 0x1ffff, (s.b() >> 2) & 0x1f,
                            (s.b() & 0x100) == 0, dgid, (s.b() & 0x200) == 0 ? 1 : s.n(), clampInt(s.y()),
                            s.n(), clampInt(s.x()))));
                });
                case SEND_BATCH -> {
                    int sge = Math.floorMod(s.x(), 36) - 2;
                    int cap = (long) Math.max(1, s.n()) * Math.max(1, sge) > (1 << 16) ? s.n() & 0xff : s.n();
                    int inline = (s.b() & 1) == 0 ? clampInt(s.y() % (1 << 16)) : 0;
                    call("new SendBatch(" + cap + ", " + sge + ", " + inline + ")",
                            () -> sends.add(new SendBatch(cap, sge, inline)));
                }
                case RECEIVE_BATCH -> {
                    int sge = Math.floorMod(s.x(), 36) - 2;
                    int cap = (long) Math.max(1, s.n()) * Math.max(1, sge) > (1 << 16) ? s.n() & 0xff : s.n();
                    call("new ReceiveBatch(" + cap + ", " + sge + ")", () -> receives.add(new ReceiveBatch(cap, sge)));
                }
                case ENCODE_SEND -> encodeSend(s, mr, len);
                case ENCODE_RECEIVE -> {
                    ReceiveBatch b = pick(receives, s.a());
                    call("encode receive", () -> {
                        switch (s.n() & 3) {
                            case 0, 1 -> b.receive(s.n(), mr, s.x(), len);
                            case 2 -> b.scatter(mr, s.x(), len);
                            default -> b.clear();
                        }
                        b.count();
                        b.failedIndex();
                    });
                }
                case POST_SEND -> call("post(SendBatch)", () -> {
                    SendBatch b = pick(sends, s.b());
                    switch (s.n() & 3) {
                        case 0 -> qp.post(b);
                        case 1 -> qp.tryPost(b);
                        case 2 -> QueuePairEx.of(qp).post(b); // ibv_wr_*: refused on QPs built without it
                        default -> QueuePairEx.of(qp).tryPost(b);
                    }
                });
                case POST_RECEIVE -> call("post(ReceiveBatch)", () -> {
                    ReceiveBatch b = pick(receives, s.b());
                    if ((s.n() & 1) == 0) {
                        qp.post(b);
                    } else {
                        qp.tryPost(b);
                    }
                    qp.outstandingReceives();
                });
                case POST_SHORTCUT -> call("post shortcut", () -> {
                    switch (s.n() & 3) {
                        case 0 -> qp.postSend(s.x(), mr, s.x(), len);
                        case 1 -> qp.postReceive(s.x(), mr, s.x(), len);
                        default -> qp.postSendInline(s.x(), data(s.n() >> 2));
                    }
                });
                case POLL -> {
                    CompletionQueue cq = pick(cqs, s.a());
                    WorkCompletions wcs = pick(wcss, s.b());
                    call("poll", () -> {
                        int n = cq.poll(wcs);
                        for (int i = 0; i < n; i++) {
                            wcs.get(i);
                            if (wcs.region(i) != null) {
                                wcs.buffer(i);
                            }
                        }
                    });
                }
                case AWAIT -> call("await", () -> pick(cqs, s.a()).await(pick(wcss, s.b()),
                        Duration.ofMillis(Math.floorMod(s.n(), 50) - 1)));
                case CLOSE -> close(s);
                case WINDOW -> {
                    ProtectionDomain pd = pick(pds, s.a());
                    MemoryWindow.Type type = (s.n() & 1) == 0 ? MemoryWindow.Type.TYPE_2 : MemoryWindow.Type.TYPE_1;
                    call("allocateWindow(" + type + ")", () -> windows.add(pd.allocateWindow(type)));
                }
                case WINDOW_BIND -> {
                    MemoryWindow w = pick(windows, s.n());
                    call("window bind", () -> {
                        w.bind(qp, s.x(), mr, s.x(), s.y(), flags(s.n() >> 1));
                        w.remote();
                        w.rkey();
                    });
                }
                case ENGINE -> call("engine", () -> {
                    if (engine == null || (s.b() & 7) == 0) {
                        if (engine != null) {
                            engine.close();
                        }
                        // not BUSY_POLL: a spinning engine thread would starve the guest's one CPU
                        engine = CompletionEngine.builder()
                                .mode((s.n() & 3) == 0 ? PollingMode.ADAPTIVE : PollingMode.EVENT).build();
                    }
                    int n = Math.floorMod(s.n(), 64);
                    cqs.add(switch (Math.floorMod(s.x(), 3)) {
                        case 0 -> engine.createCompletionQueue(ctx, n);
                        // handlers that keep the view past their call and throw on every other completion
                        case 1 -> engine.createCompletionQueueWithHandler(ctx, n, v -> {
                            keptView = v;
                            if ((v.wrId() & 1) == 1) {
                                throw new IllegalStateException("a fuzzed handler that throws");
                            }
                        });
                        default -> engine.createCompletionQueueWithHandler(ctx, n, v -> {
                            keptView = v;
                            v.toCompletion();
                        });
                    });
                    dev.rdma4j.engine.CompletionView kept = keptView;
                    if (kept != null) {
                        kept.wrId(); // outside its call: IllegalStateException, a documented refusal
                    }
                });
                case WRAP -> call("wrap", () -> {
                    if (engine != null) {
                        aqs.add(engine.wrap(qp));
                    }
                });
                case ASYNC -> asyncCall(s, mr, len);
                case BLOCKING -> blockingCall(s, mr, len);
                case RACE -> race(s, mr, qp);
            }
        }

        private static AccessFlag[] flags(int bits) {
            Set<AccessFlag> f = EnumSet.noneOf(AccessFlag.class);
            AccessFlag[] all = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
                AccessFlag.REMOTE_ATOMIC, AccessFlag.LOCAL_WRITE, AccessFlag.ZERO_BASED, AccessFlag.MW_BIND,
                AccessFlag.ON_DEMAND, AccessFlag.RELAXED_ORDERING};
            for (int i = 0; i < all.length; i++) {
                // the exotic flags rarely: bits 5.. are set in one pick of 8
                if ((bits & (1 << i)) != 0 && (i < 5 || (bits & 0x7000) == 0x7000)) {
                    f.add(all[i]);
                }
            }
            return f.toArray(AccessFlag[]::new);
        }

        private void encodeSend(Step s, MemoryRegion mr, int len) {
            SendBatch b = pick(sends, s.a());
            RemoteRegion remote = remote(s);
            AddressHandle ah = pick(ahs, s.n());
            MemoryWindow w = pick(windows, s.b());
            call("encode send " + (s.n() & 31), () -> {
                switch (s.n() & 31) {
                    case 0 -> b.send(s.x(), mr, s.x(), len);
                    case 1 -> b.sendWithImmediate(1, mr, s.x(), len, s.n());
                    case 2 -> {
                        if (ah != null) {
                            b.sendTo(2, mr, s.x(), len, ah, s.n(), s.b());
                        }
                    }
                    case 3 -> b.sendInline(3, data(s.n() >> 4));
                    case 4 -> b.writeInline(4, data(s.n() >> 4), remote, s.y());
                    case 5 -> b.write(5, mr, s.x(), len, remote, s.y());
                    case 6 -> b.writeWithImmediate(6, mr, s.x(), len, remote, s.y(), s.n());
                    case 7 -> b.read(7, mr, s.x(), len, remote, s.y());
                    case 8 -> b.compareAndSwap(8, mr, s.x(), remote, s.y(), 1, 2);
                    case 9 -> b.fetchAndAdd(9, mr, s.x(), remote, s.y(), 1);
                    case 10 -> b.gather(mr, s.x(), len);
                    case 11 -> b.unsignaled().solicited();
                    case 12 -> b.inline().fence();
                    case 13 -> b.bindWindow(13, w, mr, s.x(), s.y(), flags(s.n() >> 5));
                    case 14 -> b.localInvalidate(14, w);
                    case 15 -> b.sendWithInvalidate(15, mr, s.x(), len, remote);
                    default -> b.clear();
                }
                b.count();
                b.capacity();
                b.failedIndex();
            });
        }

        private AsyncQueuePair aq(Step s) {
            return pick(aqs, s.a());
        }

        private void asyncCall(Step s, MemoryRegion mr, int len) {
            AsyncQueuePair aq = aq(s);
            if (aq == null) {
                return;
            }
            RemoteRegion remote = remote(s);
            call("async " + (s.n() & 7), () -> futures.add(switch (s.n() & 7) {
                case 0 -> aq.sendAsync(mr, s.x(), len);
                case 1 -> aq.receiveAsync(mr, s.x(), len);
                case 2 -> aq.writeAsync(mr, s.x(), len, remote, s.y());
                case 3 -> aq.readAsync(mr, s.x(), len, remote, s.y());
                case 4 -> aq.fetchAndAddAsync(mr, s.x(), remote, s.y(), 1);
                case 5 -> aq.sendInlineAsync(data(s.n() >> 3));
                case 6 -> aq.postAsync(pick(sends, s.b()));
                default -> {
                    aq.sendRoom();
                    aq.receiveRoom();
                    yield CompletableFuture.completedFuture(null);
                }
            }));
        }

        private void blockingCall(Step s, MemoryRegion mr, int len) {
            AsyncQueuePair aq = aq(s);
            if (aq == null) {
                return;
            }
            Duration d = Duration.ofMillis(Math.floorMod(s.n(), 200));
            RemoteRegion remote = remote(s);
            call("blocking " + (s.n() & 3), () -> {
                switch (s.n() & 3) {
                    case 0 -> aq.blocking(d).send(mr, s.x(), len);
                    case 1 -> aq.blocking(d).receive(mr, s.x(), len);
                    case 2 -> aq.blocking(d).write(mr, s.x(), len, remote, s.y());
                    default -> aq.blocking(d).read(mr, s.x(), len, remote, s.y());
                }
            });
        }

        /** Everything that can be closed, in one list to pick from. */
        private List<AutoCloseable> closeables() {
            List<AutoCloseable> all = new ArrayList<>();
            all.add(ctx);
            all.addAll(pds);
            all.addAll(regions);
            all.addAll(cqs);
            all.addAll(channels);
            all.addAll(qps);
            all.addAll(srqs);
            all.addAll(ahs);
            all.addAll(windows);
            all.addAll(sends);
            all.addAll(receives);
            all.addAll(wcss);
            all.addAll(aqs);
            if (engine != null) {
                all.add(engine);
            }
            return all;
        }

        private void close(Step s) {
            AutoCloseable c = pick(closeables(), s.a());
            call("close " + c.getClass().getSimpleName(), c::close);
            if ((s.b() & 3) == 0) {
                call("close again " + c.getClass().getSimpleName(), c::close); // idempotent
            }
        }

        /**
         * {@code close()} of one object against 2..5 threads (virtual and platform) posting and polling with
         * objects of their own: every thread ends (no hang), and each outcome is documented.
         */
        private void race(Step s, MemoryRegion mr, QueuePair qp) {
            CompletionQueue cq = qp == null ? null : qp.sendCompletionQueue();
            if (qp == null || mr == null) {
                return;
            }
            int threads = 2 + Math.floorMod(s.n(), 4);
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch started = new CountDownLatch(threads);
            List<Thread> ts = new ArrayList<>();
            List<Throwable> seen = new CopyOnWriteArrayList<>();
            for (int k = 0; k < threads; k++) {
                int kind = (k + s.b()) % 4;
                Runnable body = () -> {
                    started.countDown();
                    try (SendBatch b = new SendBatch(2, 1); WorkCompletions wcs = new WorkCompletions(4)) {
                        for (int i = 0; i < 200 && !stop.get(); i++) {
                            try {
                                CALLS.incrementAndGet();
                                switch (kind) {
                                    case 0 -> qp.tryPost(b.clear().send(i, mr, 0, 8).unsignaled());
                                    case 1 -> qp.postReceive(i, mr, 0, 8);
                                    case 2 -> cq.poll(wcs);
                                    default -> {
                                        qp.close(); // several closers at once: one wins, the others return
                                        CALLS.incrementAndGet();
                                        qp.state();
                                    }
                                }
                            } catch (Throwable t) {
                                seen.add(t);
                            }
                        }
                    }
                };
                ts.add((s.b() & 1) == 0 ? Thread.ofVirtual().unstarted(body) : Thread.ofPlatform().unstarted(body));
            }
            ts.forEach(Thread::start);
            try {
                started.await();
                Thread.sleep(Math.floorMod(s.x(), 20));
                AutoCloseable victim = switch (s.b() & 3) {
                    case 0 -> qp;
                    case 1 -> cq;
                    case 2 -> mr;
                    default -> mr.protectionDomain();
                };
                call("racing close " + victim.getClass().getSimpleName(), victim::close);
                if (victim != qp) {
                    call("racing close QueuePair", qp::close);
                }
                for (Thread t : ts) {
                    t.join();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            } finally {
                stop.set(true);
            }
            for (Throwable t : seen) {
                check("racing thread", t);
            }
        }

        /** Closes everything, dependents first; refusals (still in use) are documented, anything else fails. */
        @Override
        public void close() {
            for (CompletableFuture<WorkCompletion> f : futures) {
                if (!f.isDone()) {
                    continue; // completes (flushed) when its QP closes below
                }
                try {
                    f.getNow(null);
                } catch (Throwable t) {
                    check("a future", t);
                }
            }
            List<List<? extends AutoCloseable>> order = List.of(aqs, qps, srqs, ahs, windows, regions, cqs, channels,
                    pds);
            for (List<? extends AutoCloseable> l : order) {
                for (AutoCloseable c : l) {
                    call("tear-down close " + c.getClass().getSimpleName(), c::close);
                }
            }
            for (CompletableFuture<WorkCompletion> f : futures) {
                try {
                    f.get(60, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    fail("a future", e, "still pending 60 s after its queue pair closed");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Throwable t) {
                    check("a future", t);
                }
            }
            call("tear-down close Context", ctx::close);
            if (engine != null) {
                call("tear-down close CompletionEngine", engine::close);
            }
            for (List<? extends AutoCloseable> l : List.of(sends, receives, wcss)) {
                for (AutoCloseable c : l) {
                    call("tear-down close " + c.getClass().getSimpleName(), c::close);
                }
            }
        }
    }

    // ------------------------------------------------------------------ hangs

    /**
     * A step that outlives its deadline is a hang: every thread's stack, then halt(3). Start-up is not watched
     * (a loaded guest once took a minute to reach the first step); the child's own deadline covers it.
     */
    static final class Watchdog {
        private static volatile String step; // null: nothing to watch (JVM start-up, between tries)
        private static volatile long since = System.nanoTime();

        static void start(long deadlineSeconds) {
            Thread t = Thread.ofPlatform().daemon().name("misuse-fuzz-watchdog").start(() -> {
                while (true) {
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    }
                    String s = step;
                    if (s != null && System.nanoTime() - since > TimeUnit.SECONDS.toNanos(deadlineSeconds)) {
                        StringBuilder b = new StringBuilder("FUZZ HANG: seed " + System.getProperty(SEED) + ", "
                                + s + " still running after " + deadlineSeconds + " s\n");
                        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                            b.append(e.getKey()).append('\n');
                            for (StackTraceElement f : e.getValue()) {
                                b.append("\tat ").append(f).append('\n');
                            }
                        }
                        System.out.println(b);
                        System.out.flush();
                        Runtime.getRuntime().halt(3);
                    }
                }
            });
            t.setUncaughtExceptionHandler((th, e) -> e.printStackTrace());
        }

        static void begin(String what) {
            since = System.nanoTime();
            step = what;
        }

        static void end() {
            step = null;
        }
    }
}
