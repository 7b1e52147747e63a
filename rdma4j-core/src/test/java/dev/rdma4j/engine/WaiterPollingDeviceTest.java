package dev.rdma4j.engine;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
     * Round trips where the receiving side waits by polling: the waiter dispatches (its own thread runs the
     * continuations, counted by the engine), and after every wait the engine alone completes a receive nobody
     * polls for (the waiter armed the queue as it left: without that, nothing would wake the engine).
     */
    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void theWaiterDispatchesAndTheEngineTakesTheQueueBackArmed(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 16)) {
            Thread me = Thread.currentThread();
            AtomicInteger onWaiter = new AtomicInteger();
            for (int i = 0; i < 50; i++) {
                CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
                r.whenComplete((wc, e) -> {
                    if (Thread.currentThread() == me) {
                        onWaiter.incrementAndGet();
                    }
                });
                p.a.sendAsync(p.memA, 0, 64);
                assertThat(p.engine.pollWhileWaiting(p.cqB, r, NANOS)).isTrue();
                assertThat(r.get().byteLength()).isEqualTo(64);

                // nobody polls now: the engine must see this one by itself
                CompletableFuture<WorkCompletion> alone = p.b.receiveAsync(p.memB, 4096, 64);
                p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
                assertThat(alone.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            }
            // a message's round trip is far longer than the few instructions between the post and the poll
            assertThat(onWaiter.get()).as("receives dispatched on the waiting thread").isPositive();
            assertThat(p.engine.completionsByWaiters()).isGreaterThanOrEqualTo(onWaiter.get());
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
            long before = p.engine.waiterLooks();
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
            long looks = p.engine.waiterLooks() - before;
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
        int n = 400;
        try (EnginePair p = new EnginePair(mode, 512)) {
            List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<WorkCompletion>> receives = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int slot = i;
                CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, slot * 64L, 64);
                r.whenComplete((wc, e) -> order.add(p.memB.segment().get(JAVA_INT, slot * 64L)));
                receives.add(r);
            }
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < n; i++) {
                    p.memA.segment().set(JAVA_INT, i * 64L, i);
                    p.a.sendAsync(p.memA, i * 64L, 64).join();
                }
            });
            for (int i = 49; i < n; i += 50) { // waits for every 50th, each time leaving the next ones to the engine
                assertThat(p.engine.pollWhileWaiting(p.cqB, receives.get(i), NANOS)).isTrue();
                if (i + 25 < n) {
                    receives.get(i + 25).get(T, TimeUnit.SECONDS); // completed with nobody polling
                }
            }
            sent.get(T, TimeUnit.SECONDS);
            CompletableFuture.allOf(receives.toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
            assertThat(order).hasSize(n).isSorted();
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
