package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.ChildJvm;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.SendBatch;
import dev.rdma4j.UdDestination;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import dev.rdma4j.testing.HangWatchdog;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A misuse fuzzer for rdma_cm's datagrams ({@code dev.rdma4j.MisuseFuzz}'s world has no rdma_cm): each try is a random,
 * seeded sequence of {@link CmDatagram#openAsync}, {@link CmDatagram#connectAsync}, {@link CmListener} requests
 * answered with {@link CmConnectionRequest#acceptDatagramAsync} or rejected, {@link CmDatagram#joinMulticastAsync},
 * {@link MulticastGroup#close()}, sends to the peers and groups ({@link SendBatch#to}), closes of datagrams and of
 * their queue pairs, and a datagram's close racing a join, a leave or a send on another thread, on closed objects
 * as often as on open ones, with random arguments (private data too long, timeouts not positive, setups that are
 * not UD or throw, addresses that are not multicast).
 *
 * <p>The property, checked in a child JVM per seed (a crash is observed there, not suffered): no crash (no {@code
 * hs_err}, no exit status of 128 or more), no hang (a step that outlives {@link #STEP_DEADLINE} prints every thread
 * and halts the child with status 3), every call returns or throws a documented exception ({@link #documented}),
 * every future completes the same way within its timeout, and when the try closes everything the channel, the CQs
 * and the PDs close: no rdma_cm id, address handle or queue pair was left behind.
 *
 * <p>A seed fixes each try's sequence of ops and each step's random choices (a generator per step); which objects
 * there are to pick from can still differ with timing (a future completed or not yet). A failing seed reproduces
 * with {@code RDMA4J_CM_FUZZ_SEEDS=S RDMA4J_CM_FUZZ_TRIES=T scripts/device-tests --module rdma4j-core
 * --select-class dev.rdma4j.connect.CmDatagramMisuseDeviceTest} (printed with each seed); the child prints the
 * steps of a failing try.
 */
@Tag("device")
@HangWatchdog.Limit(seconds = 900)
class CmDatagramMisuseDeviceTest {
    /** Fixed seeds; a random one is added (and printed) on each run. */
    static final long[] SEEDS = {20261129L, 7L, 4242L};
    static final int TRIES = 6;
    static final Duration STEP_DEADLINE = Duration.ofSeconds(60);
    static final Duration CHILD_DEADLINE = Duration.ofSeconds(600);
    private static final Pattern SUMMARY = Pattern.compile(
            "cm datagram misuse: seed (-?\\d+), (\\d+) tries, (\\d+) calls, (\\d+) refused with documented exceptions: "
                    + "(\\w+)");

    /**
     * What the API documents: {@link IllegalStateException} (closed, closing, not ready, answered),
     * {@link IllegalArgumentException} (a value out of range), {@link VerbsException} (a verb failed),
     * {@link CmException} (rdma_cm reported a failure event), {@link TimeoutException} (a future's deadline).
     */
    static boolean documented(Throwable t) {
        return t instanceof IllegalStateException || t instanceof IllegalArgumentException
                || t instanceof VerbsException || t instanceof CmException || t instanceof TimeoutException;
    }

    @Test
    void randomCmDatagramMisuseNeitherCrashesNorHangsNorLeaks(@TempDir Path dir) throws Exception {
        List<Long> seeds = new ArrayList<>();
        String fixed = System.getenv("RDMA4J_CM_FUZZ_SEEDS");
        if (fixed != null && !fixed.isBlank()) {
            for (String s : fixed.split(",")) {
                seeds.add(Long.parseLong(s.trim()));
            }
        } else {
            for (long s : SEEDS) {
                seeds.add(s);
            }
            seeds.add(new SecureRandom().nextLong());
        }
        String t = System.getenv("RDMA4J_CM_FUZZ_TRIES");
        int tries = t == null || t.isBlank() ? TRIES : Integer.parseInt(t.trim());
        for (long seed : seeds) {
            String again = "RDMA4J_CM_FUZZ_SEEDS=" + seed + " RDMA4J_CM_FUZZ_TRIES=" + tries
                    + " scripts/device-tests --module rdma4j-core --select-class " + getClass().getName();
            System.out.println("cm datagram misuse: seed " + seed + " (reproduce: " + again + ")");
            Path work = Files.createDirectory(dir.resolve("seed" + seed));
            ChildJvm child = ChildJvm.run(work, CHILD_DEADLINE, Child.class, Long.toString(seed),
                    Integer.toString(tries), Long.toString(STEP_DEADLINE.toSeconds()));
            String context = "seed " + seed + " (reproduce: " + again + "); child output:\n" + child.output();
            assertThat(child.crashLogs()).as("hs_err files (the JVM crashed), %s", context).isEmpty();
            assertThat(child.exitCode()).as("exit status >= 128 (the JVM died of a signal), %s", context)
                    .isLessThan(128);
            assertThat(child.output()).as("a step hung, %s", context).doesNotContain("FUZZ HANG");
            assertThat(child.exitCode()).as("exit status (1: an undocumented outcome), %s", context).isZero();
            Matcher m = SUMMARY.matcher(child.output());
            assertThat(m.find()).as("the child's summary line, %s", context).isTrue();
            assertThat(m.group(5)).isEqualTo("ok");
            assertThat(Long.parseLong(m.group(1))).isEqualTo(seed);
            assertThat(Integer.parseInt(m.group(2))).as("tries run").isEqualTo(tries);
            assertThat(Long.parseLong(m.group(3))).as("calls made: the fuzzer did something").isGreaterThan(10L * tries);
            assertThat(Long.parseLong(m.group(4))).as("refusals: it reached the checks").isPositive();
            child.output().lines().filter(l -> l.startsWith("cm datagram misuse: seed")).forEach(System.out::println);
        }
    }

    /** The child JVM: {@code seed tries stepDeadlineSeconds}; exit 0 when every try held, 1 if not, 3 on a hang. */
    public static final class Child {
        private Child() {
        }

        public static void main(String[] args) throws Exception {
            long seed = Long.parseLong(args[0]);
            int tries = Integer.parseInt(args[1]);
            Watchdog watchdog = new Watchdog(seed, Long.parseLong(args[2]));
            Random random = new Random(seed);
            boolean ok = true;
            for (int t = 0; t < tries; t++) {
                List<String> steps = new ArrayList<>();
                try (World w = new World(random.nextLong(), watchdog, steps)) {
                    int n = 15 + random.nextInt(46);
                    for (int i = 0; i < n; i++) {
                        w.step(i);
                    }
                    watchdog.begin("try " + t + ": closing the world");
                }
                watchdog.end();
                List<String> failures = World.lastFailures;
                if (!failures.isEmpty()) {
                    ok = false;
                    System.out.println("FUZZ FAILURE try " + t + ": " + failures.size() + " undocumented outcome(s):\n"
                            + String.join("\n", failures) + "\nsteps:\n  " + String.join("\n  ", steps));
                }
            }
            System.out.printf("cm datagram misuse: seed %d: %d datagrams made, %d groups joined%n", seed,
                    World.DATAGRAMS.get(), World.GROUPS.get());
            System.out.printf("cm datagram misuse: seed %d, %d tries, %d calls, %d refused with documented exceptions:"
                    + " %s%n", seed, tries, World.CALLS.get(), World.REFUSED.get(), ok ? "ok" : "FAILED");
            System.out.flush();
            System.exit(ok ? 0 : 1);
        }
    }

    /** A step that outlives its deadline is a hang: every thread's stack, then halt(3). */
    static final class Watchdog {
        private volatile String step;
        private volatile long since = System.nanoTime();

        Watchdog(long seed, long deadlineSeconds) {
            Thread.ofPlatform().daemon().name("cm-fuzz-watchdog").start(() -> {
                while (true) {
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    }
                    String s = step;
                    if (s != null && System.nanoTime() - since > TimeUnit.SECONDS.toNanos(deadlineSeconds)) {
                        StringBuilder b = new StringBuilder("FUZZ HANG: seed " + seed + ", " + s + " still running after "
                                + deadlineSeconds + " s\n");
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
        }

        void begin(String what) {
            since = System.nanoTime();
            step = what;
        }

        void end() {
            step = null;
        }
    }

    /** One try's objects; each step picks among them by index, closed ones too. */
    static final class World implements AutoCloseable {
        static final AtomicLong CALLS = new AtomicLong();
        static final AtomicLong REFUSED = new AtomicLong();
        static final AtomicLong DATAGRAMS = new AtomicLong();
        static final AtomicLong GROUPS = new AtomicLong();
        static volatile List<String> lastFailures = List.of();

        private final long seed;
        /** This step's choices: a generator per step, so that a step's choices do not shift the next step's. */
        private Random r;
        private final Watchdog watchdog;
        private final List<String> steps;
        private final List<String> failures = new ArrayList<>();
        private final CompletionEngine engine;
        private final CmEventChannel channel;
        private final CmListener listener;
        private final InetAddress device;
        private final List<InetAddress> groupAddresses = new ArrayList<>();
        private final Map<ProtectionDomain, Side> sides = new ConcurrentHashMap<>();
        private final List<CompletableFuture<CmDatagram>> opening = new ArrayList<>();
        private final List<CmDatagram> datagrams = new ArrayList<>();
        private final List<CompletableFuture<MulticastGroup>> joins = new ArrayList<>();
        private final List<MulticastGroup> groups = new ArrayList<>();
        private final List<CompletableFuture<CmConnectionRequest>> nextRequests = new ArrayList<>();
        private final List<CmConnectionRequest> requests = new ArrayList<>();
        private final SendBatch batch = new SendBatch(2, 1);

        /** A setup's PD, CQ and region. */
        record Side(ProtectionDomain pd, CompletionQueue cq, MemoryRegion mr, WorkCompletions wcs) {
        }

        World(long seed, Watchdog watchdog, List<String> steps) throws Exception {
            this.seed = seed;
            this.r = new Random(seed);
            this.watchdog = watchdog;
            this.steps = steps;
            watchdog.begin("making the world");
            device = CmPair.deviceAddress();
            engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
            channel = CmEventChannel.create(engine);
            listener = CmListener.listen(channel, new InetSocketAddress(device, 0), 8, CmPortSpace.UDP);
            for (int i = 0; i < 3; i++) {
                groupAddresses.add(InetAddress.getByName("239.9." + r.nextInt(256) + "." + (1 + r.nextInt(250))));
            }
        }

        @FunctionalInterface
        interface Call {
            void run() throws Exception;
        }

        /** One call: a documented exception is a refusal, anything else a failure. */
        void call(String what, Call c) {
            CALLS.incrementAndGet();
            try {
                c.run();
            } catch (Throwable t) {
                check(what, t);
            }
        }

        void check(String what, Throwable t) {
            Throwable c = t;
            if ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
                c = c.getCause();
            }
            if (documented(c) && c.getMessage() != null && !c.getMessage().isBlank()) {
                REFUSED.incrementAndGet();
                return;
            }
            fail(what, c, documented(c) ? "a documented exception without a message" : "undocumented exception");
        }

        synchronized void fail(String what, Throwable t, String why) {
            java.io.StringWriter sw = new java.io.StringWriter();
            t.printStackTrace(new java.io.PrintWriter(sw));
            failures.add(what + ": " + why + ": " + sw);
        }

        private <T> T pick(List<T> l) {
            return l.isEmpty() ? null : l.get(r.nextInt(l.size()));
        }

        private byte[] privateData() {
            return new byte[r.nextInt(10) == 0 ? 137 + r.nextInt(60) : r.nextInt(40)];
        }

        private Duration timeout() {
            return switch (r.nextInt(12)) {
                case 0 -> Duration.ZERO;
                case 1 -> Duration.ofMillis(-1);
                default -> Duration.ofMillis(500 + r.nextInt(2500));
            };
        }

        /** A UD setup mostly; sometimes RC, one that throws, or one that closes the queue pair it is given. */
        private ConnectionSetup setup() {
            int kind = r.nextInt(10);
            int receives = r.nextInt(5);
            return new ConnectionSetup() {
                @Override
                public QueuePairBuilder configure(dev.rdma4j.Context ctx) throws VerbsException {
                    if (kind == 0) {
                        throw new IllegalStateException("a fuzzed setup that refuses");
                    }
                    ProtectionDomain pd = ctx.allocateProtectionDomain();
                    CompletionQueue cq = ctx.createCompletionQueue(64);
                    MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                    sides.put(pd, new Side(pd, cq, mr, new WorkCompletions(16)));
                    return QueuePair.builder(pd, kind == 1 ? QpType.RC : QpType.UD).completionQueue(cq).capacity(8, 8);
                }

                @Override
                public void beforeConnect(QueuePair qp) throws VerbsException {
                    Side s = sides.get(qp.protectionDomain());
                    for (int i = 0; i < receives; i++) {
                        qp.postReceive(i, s.mr(), (long) i * 512, 512);
                    }
                    if (kind == 2) {
                        qp.close();
                    }
                }
            };
        }

        /** Keeps the future; half the time also waits for it, so that later steps have its object to misuse. */
        private <T> void settleSometimes(List<CompletableFuture<T>> futures, CompletableFuture<T> f) {
            futures.add(f);
            if (r.nextBoolean()) {
                mustComplete("a future awaited as it was made", f);
            }
        }

        /** Moves what completed into the lists of objects to pick from. */
        private void harvest() {
            for (CompletableFuture<CmDatagram> f : opening) {
                if (f.isDone() && !f.isCompletedExceptionally() && !datagrams.contains(f.join())) {
                    DATAGRAMS.incrementAndGet();
                    datagrams.add(f.join());
                }
            }
            for (CompletableFuture<MulticastGroup> f : joins) {
                if (f.isDone() && !f.isCompletedExceptionally() && !groups.contains(f.join())) {
                    GROUPS.incrementAndGet();
                    groups.add(f.join());
                }
            }
            for (CompletableFuture<CmConnectionRequest> f : nextRequests) {
                if (f.isDone() && !f.isCompletedExceptionally() && !requests.contains(f.join())) {
                    requests.add(f.join());
                }
            }
        }

        void step(int i) {
            harvest();
            r = new Random(seed * 1_000_003L + i);
            int op = r.nextInt(100);
            String what = "step " + i + ": " + op;
            watchdog.begin(what);
            CmDatagram d = pick(datagrams);
            if (op < 12) {
                InetAddress to = r.nextInt(8) == 0 ? device : pick(groupAddresses);
                InetSocketAddress source = r.nextInt(6) == 0 ? null : new InetSocketAddress(device, 0);
                log(what + " openAsync " + to + " from " + source);
                call("openAsync", () -> settleSometimes(opening, CmDatagram.openAsync(channel, source, to, setup(),
                        timeout(), timeout())));
            } else if (op < 22) {
                InetSocketAddress server = r.nextInt(6) == 0 ? new InetSocketAddress(device, 1 + r.nextInt(1000))
                        : listener.localAddress();
                log(what + " connectAsync " + server);
                call("connectAsync", () -> settleSometimes(opening, CmDatagram.connectAsync(channel, null, server,
                        setup(), privateData(), timeout(), timeout())));
            } else if (op < 28) {
                log(what + " nextRequestAsync");
                call("nextRequestAsync", () -> {
                    CompletableFuture<CmConnectionRequest> f = listener.nextRequestAsync();
                    nextRequests.add(f);
                    if (r.nextBoolean()) { // a moment for a resolution request under way, not a deadline
                        try {
                            f.get(200, TimeUnit.MILLISECONDS);
                        } catch (TimeoutException e) {
                            // none yet
                        }
                    }
                });
            } else if (op < 36) {
                answer(what, pick(requests));
            } else if (op < 50) {
                if (d != null) {
                    boolean multicast = r.nextInt(10) != 0;
                    InetAddress g = multicast ? pick(groupAddresses) : device;
                    boolean sendOnly = r.nextBoolean();
                    log(what + " join " + d + " " + g + (sendOnly ? " send-only" : ""));
                    call("joinMulticastAsync", () -> settleSometimes(joins, d.joinMulticastAsync(g, sendOnly)));
                }
            } else if (op < 58) {
                MulticastGroup g = pick(groups);
                if (g != null) {
                    log(what + " leave " + g);
                    call("MulticastGroup.close", g::close);
                }
            } else if (op < 72) {
                send(what, d);
            } else if (op < 77) {
                if (d != null) {
                    log(what + " close " + d);
                    call("CmDatagram.close", d::close);
                }
            } else if (op < 81) {
                if (d != null && d.queuePair() != null) {
                    log(what + " close the queue pair of " + d);
                    call("QueuePair.close", d.queuePair()::close);
                }
            } else if (op < 88) {
                query(what, d);
            } else if (op < 93) {
                race(what, d);
            } else if (op < 99) {
                await(what);
            } else {
                log(what + " close the listener");
                call("CmListener.close", listener::close);
            }
        }

        private void log(String s) {
            steps.add(s);
        }

        private void answer(String what, CmConnectionRequest q) {
            if (q == null) {
                return;
            }
            int how = r.nextInt(6);
            log(what + " answer " + how);
            call("answer " + how, () -> {
                switch (how) {
                    case 0, 1, 2 -> opening.add(q.acceptDatagramAsync(setup(), privateData()));
                    case 3 -> q.reject(privateData());
                    case 4 -> q.acceptAsync(ctx -> null, new byte[0]); // a UDP request: refused
                    default -> {
                        q.context();
                        q.privateData();
                        q.portSpace();
                    }
                }
            });
        }

        /** A send with immediate from a datagram's queue pair to a group's or a peer's destination. */
        private void send(String what, CmDatagram d) {
            if (d == null || d.queuePair() == null) {
                return;
            }
            MulticastGroup g = pick(groups);
            CmDatagram other = pick(datagrams);
            boolean toGroup = g != null && (other == null || r.nextBoolean());
            log(what + " send from " + d + " to " + (toGroup ? g : other));
            call("send", () -> {
                UdDestination to = toGroup ? g.destination() : other == null ? null : other.peer().orElse(null);
                if (to == null) {
                    return;
                }
                QueuePair qp = d.queuePair();
                Side s = sides.get(qp.protectionDomain());
                batch.clear().sendWithImmediate(1, s.mr(), 0, r.nextInt(64), 7).to(to);
                if (r.nextBoolean()) {
                    batch.unsignaled();
                }
                qp.post(batch);
                for (Side each : sides.values()) { // the receivers' too: no CQ overflows
                    each.cq().poll(each.wcs());
                }
            });
        }

        private void query(String what, CmDatagram d) {
            MulticastGroup g = pick(groups);
            log(what + " query " + d + " " + g);
            if (d != null) {
                call("localAddress", d::localAddress);
                call("getters", () -> {
                    d.peer();
                    d.peerPrivateData();
                    d.context();
                    d.isClosed();
                    d.toString();
                });
            }
            if (g != null) {
                call("group getters", () -> {
                    g.address();
                    g.isSendOnly();
                    g.error();
                    g.destination();
                });
            }
        }

        /** A datagram's close on another thread against a join, a leave, a send or its queue pair's close here. */
        private void race(String what, CmDatagram d) {
            if (d == null) {
                return;
            }
            int how = r.nextInt(4);
            MulticastGroup g = pick(groups);
            InetAddress address = pick(groupAddresses);
            log(what + " race close " + d + " against " + how);
            CountDownLatch go = new CountDownLatch(1);
            Thread closer = Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                call("racing CmDatagram.close", d::close);
            });
            go.countDown();
            switch (how) {
                case 0 -> call("racing join", () -> joins.add(d.joinMulticastAsync(address, r.nextBoolean())));
                case 1 -> {
                    if (g != null) {
                        call("racing leave", g::close);
                    }
                }
                case 2 -> send(what, d);
                default -> call("racing QueuePair.close", () -> {
                    if (d.queuePair() != null) {
                        d.queuePair().close();
                    }
                });
            }
            try {
                closer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Waits for a pending future: a datagram's or a join's completes within its timeout. */
        private void await(String what) {
            List<CompletableFuture<?>> pending = new ArrayList<>();
            opening.stream().filter(f -> !f.isDone()).forEach(pending::add);
            joins.stream().filter(f -> !f.isDone()).forEach(pending::add);
            CompletableFuture<?> f = pick(pending);
            if (f == null) {
                return;
            }
            log(what + " await a future");
            mustComplete("awaited future", f);
        }

        private void mustComplete(String what, CompletableFuture<?> f) {
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fail(what, e, "still pending after 30 s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                check(what, t);
            }
        }

        /** Settles every future, closes everything; nothing may refuse now, nor be left behind. */
        @Override
        public void close() {
            for (CompletableFuture<CmDatagram> f : opening) {
                mustComplete("a datagram's future", f);
            }
            harvest();
            for (MulticastGroup g : groups) {
                call("tear-down MulticastGroup.close", g::close); // refused while posted sends use its handle
            }
            List<CmDatagram> refused = new ArrayList<>();
            for (CmDatagram d : datagrams) {
                try {
                    d.close(); // refused while another datagram's posted sends use one of its handles
                } catch (IllegalStateException e) {
                    refused.add(d);
                }
            }
            for (CmDatagram d : refused) { // their queue pairs are all closed now: nothing pins a handle
                must("tear-down CmDatagram.close", d::close);
            }
            for (CompletableFuture<MulticastGroup> f : joins) {
                mustComplete("a join's future", f);
            }
            for (MulticastGroup g : groups) {
                must("tear-down MulticastGroup.close after its datagram's", g::close);
            }
            listener.close();
            for (CompletableFuture<CmConnectionRequest> f : nextRequests) {
                mustComplete("a request's future", f);
            }
            must("tear-down CmEventChannel.close: no rdma_cm id left", channel::close);
            for (Side s : sides.values()) {
                must("tear-down MemoryRegion.close", s.mr()::close);
                must("tear-down CompletionQueue.close: no queue pair left on it", s.cq()::close);
                must("tear-down ProtectionDomain.close: no address handle left on it", s.pd()::close);
                s.wcs().close();
            }
            batch.close();
            engine.close();
            lastFailures = List.copyOf(failures);
        }

        private void must(String what, Call c) {
            CALLS.incrementAndGet();
            try {
                c.run();
            } catch (Throwable t) {
                fail(what, t, "refused at tear-down, when nothing uses it");
            }
        }
    }
}
