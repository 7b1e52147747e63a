package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link CompletionEngine#pollWhileWaiting}: a caller that waits polls the queue itself and dispatches its
 * completions on its own thread; the engine leaves the queue to it and takes it back, armed, when it leaves.
 */
@Tag("device")
class WaiterPollingDeviceTest {
    private static final long T = 120;
    private static final long NANOS = TimeUnit.SECONDS.toNanos(T);

    /**
     * Round trips where the receiving side waits by polling: the waiter dispatches, and after every wait the engine
     * alone completes a receive nobody polls for (the waiter armed the queue as it left).
     */
    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void theWaiterDispatchesAndTheEngineTakesTheQueueBackArmed(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 16)) {
            WaiterChecks.theWaiterDispatchesAndTheEngineTakesTheQueueBack(p,
                    f -> p.engine.pollWhileWaiting(p.cqB, f, NANOS), 50);
        }
    }

    /**
     * While a caller polls, the engine looks at the queue less and less often (after 1, 2 and 4 ms, then every 8
     * ms): each look wakes its thread, which takes a core from the spinning caller (a look every millisecond was a
     * wake-up a round trip of a ping-pong in the guest), and finds the caller still there. A waiter stays for the
     * whole test (600 ms) and takes 20 messages, each sent once it took the one before; the first one's event tells
     * the engine that the queue is left to waiters.
     */
    @ParameterizedTest
    @EnumSource(value = PollingMode.class, names = "EVENT")
    void theEngineLooksLessOftenWhileAWaiterStays(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 32)) {
            List<CompletableFuture<WorkCompletion>> messages = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                messages.add(p.b.receiveAsync(p.memB, 0, 64));
            }
            CompletableFuture<WorkCompletion> never = p.b.receiveAsync(p.memB, 0, 64); // no 21st message
            long before = EngineProbe.waiterLooks(p.engine);
            long[] waited = new long[1];
            Thread waiter = Thread.ofPlatform().name("waiter").start(() -> {
                long start = System.nanoTime();
                try {
                    p.engine.pollWhileWaiting(p.cqB, never, TimeUnit.MILLISECONDS.toNanos(600));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                waited[0] = System.nanoTime() - start;
            });
            for (int i = 0; i < 20; i++) { // each once the waiter took the one before
                p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
                messages.get(i).get(T, TimeUnit.SECONDS);
            }
            waiter.join();
            long looks = EngineProbe.waiterLooks(p.engine) - before;
            long millis = TimeUnit.NANOSECONDS.toMillis(waited[0]);
            for (CompletableFuture<WorkCompletion> m : messages) {
                assertThat(m.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            }
            assertThat(never).isNotDone();
            // a look every millisecond would be one for each of them
            assertThat(looks).as("the engine's looks in %d ms of waiting", millis).isPositive()
                    .isLessThanOrEqualTo(3 + millis / 8 + 2);
        }
    }

    /** A queue handed over back and forth in the middle of a stream still dispatches it in the order it arrived. */
    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void aStreamStaysInOrderAcrossWaitersAndTheEngine(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 512)) {
            WaiterChecks.aStreamStaysInOrder(p, f -> p.engine.pollWhileWaiting(p.cqB, f, NANOS), 400);
        }
    }

    /** A wait for what never completes ends at its deadline, and the engine drives the queue again after it. */
    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void aWaitEndsAtItsDeadlineAndRefusesWhatItCannotDo(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 16)) {
            CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
            long start = System.nanoTime();
            assertThat(p.engine.pollWhileWaiting(p.cqB, r, TimeUnit.MILLISECONDS.toNanos(300))).isFalse();
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
            assertThat(r).isNotDone();
            p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
            assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);

            try (CompletionEngine other = CompletionEngine.builder().name("other").build()) {
                assertThatThrownBy(() -> other.pollWhileWaiting(p.cqB, r, 1)).isInstanceOf(
                        IllegalArgumentException.class).hasMessageContaining("not driven by this engine");
            }
            CompletableFuture<Throwable> onEngine = new CompletableFuture<>();
            p.engine.execute(() -> {
                try {
                    p.engine.pollWhileWaiting(p.cqB, new CompletableFuture<>(), 1);
                    onEngine.complete(null);
                } catch (Throwable t) {
                    onEngine.complete(t);
                }
            });
            assertThat(onEngine.get(T, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("engine thread");
        }
    }
}
