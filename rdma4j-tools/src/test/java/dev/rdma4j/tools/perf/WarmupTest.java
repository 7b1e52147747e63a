package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The warm-up's rounds, agreed between two sides over a real TCP connection, with scripted JIT activity. */
class WarmupTest {
    private ServerSocket listener;
    private Socket a;
    private Socket b;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @BeforeEach
    void connect() throws IOException {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        a = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
        b = listener.accept();
        a.setSoTimeout(10_000);
        b.setSoTimeout(10_000);
    }

    @AfterEach
    void close() throws IOException {
        pool.shutdownNow();
        a.close();
        b.close();
        listener.close();
    }

    /** At work for the first {@code busy} questions after the baseline, quiet after. */
    private static BooleanSupplier busyFor(int busy) {
        AtomicInteger asked = new AtomicInteger();
        return () -> asked.getAndIncrement() <= busy;
    }

    private Warmup.Result[] both(BooleanSupplier jitA, int secondsA, BooleanSupplier jitB, int secondsB,
            AtomicInteger roundsA, AtomicInteger roundsB) throws Exception {
        Future<Warmup.Result> ra = pool.submit(() -> new Warmup(jitA).run(roundsA::incrementAndGet, 100, secondsA, a));
        Future<Warmup.Result> rb = pool.submit(() -> new Warmup(jitB).run(roundsB::incrementAndGet, 100, secondsB, b));
        return new Warmup.Result[] {ra.get(20, TimeUnit.SECONDS), rb.get(20, TimeUnit.SECONDS)};
    }

    @Test
    void bothSidesRunTheRoundsTheSlowerJitNeeds() throws Exception {
        AtomicInteger na = new AtomicInteger();
        AtomicInteger nb = new AtomicInteger();
        Warmup.Result[] r = both(busyFor(5), 60, busyFor(0), 60, na, nb);
        // A compiles in rounds 1..5, is quiet in 6 and 7; B is quiet from round 1 but goes on with A
        assertThat(na.get()).isEqualTo(7);
        assertThat(nb.get()).isEqualTo(7);
        for (Warmup.Result x : r) {
            assertThat(x.rounds()).isEqualTo(7);
            assertThat(x.iterations()).isEqualTo(700);
            assertThat(x.settled()).isTrue();
            assertThat(x.limited()).isFalse();
        }
    }

    @Test
    void aQuietStartStillTakesTwoRounds() throws Exception {
        AtomicInteger na = new AtomicInteger();
        AtomicInteger nb = new AtomicInteger();
        Warmup.Result[] r = both(busyFor(0), 60, busyFor(0), 60, na, nb);
        assertThat(na.get()).isEqualTo(2);
        assertThat(nb.get()).isEqualTo(2);
        assertThat(r[0].settled()).isTrue();
    }

    @Test
    void timeZeroIsOneRoundWhateverTheJit() throws Exception {
        AtomicInteger na = new AtomicInteger();
        AtomicInteger nb = new AtomicInteger();
        Warmup.Result[] r = both(() -> true, 0, () -> true, 0, na, nb);
        assertThat(na.get()).isEqualTo(1);
        assertThat(nb.get()).isEqualTo(1);
        assertThat(r[0].settled()).isFalse();
        assertThat(r[0].limited()).isFalse();
    }

    @Test
    void aJitThatNeverSettlesEndsAtTheLongerLimit() throws Exception {
        AtomicInteger na = new AtomicInteger();
        AtomicInteger nb = new AtomicInteger();
        long start = System.nanoTime();
        Warmup.Result[] r = both(() -> true, 1, () -> {
            sleep(5);
            return true;
        }, 0, na, nb);
        long took = System.nanoTime() - start;
        assertThat(took).isGreaterThanOrEqualTo(1_000_000_000L);
        assertThat(na.get()).isEqualTo(nb.get()).isGreaterThan(1);
        for (Warmup.Result x : r) {
            assertThat(x.settled()).isFalse();
            assertThat(x.limited()).isTrue();
        }
    }

    @Test
    void aPeerThatLeavesFailsTheWarmup() throws Exception {
        CompletableFuture.runAsync(() -> {
            try {
                b.getInputStream().read();
                b.close();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, pool);
        assertThatThrownBy(() -> new Warmup(() -> true).run(() -> { }, 10, 60, a))
                .isInstanceOf(PerfException.class).hasMessageContaining("the peer left during the warm-up");
    }

    @Test
    void compilerThreadTicksAreReadFromTheStatLine() {
        String c2 = "215 (C2 CompilerThre) S 198 198 1 0 -1 4194368 3 0 0 0 478 12 0 0 20 0 26 0 271 0 0";
        assertThat(Warmup.compilerTicks(c2)).isEqualTo(490);
        String c1 = "216 (C1 CompilerThre) R 198 198 1 0 -1 4194368 3 0 0 0 7 1 0 0 20 0 26 0 271 0 0";
        assertThat(Warmup.compilerTicks(c1)).isEqualTo(8);
        assertThat(Warmup.compilerTicks("207 (java) R 198 198 1 0 -1 4194368 3 0 0 0 713 93 0 0")).isZero();
        assertThat(Warmup.compilerTicks("9 (a) b) (C2 CompilerThre) S 1")).isZero();
        // this JVM has compiler threads, and they have run by now
        assertThat(Warmup.compilerThreadTicks()).isPositive();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
