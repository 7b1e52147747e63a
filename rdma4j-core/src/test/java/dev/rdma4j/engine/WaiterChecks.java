package dev.rdma4j.engine;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every way a caller may wait for the engine ({@link CompletionEngine#pollWhileWaiting},
 * {@link CompletionEngine#blockWhileWaiting}) must do, checked on an {@link EnginePair}'s queue B.
 */
final class WaiterChecks {
    static final long T = 120;

    /** One way of waiting on queue B until {@code f} is done; true once it is. */
    @FunctionalInterface
    interface Wait {
        boolean until(CompletableFuture<?> f) throws InterruptedException;
    }

    private WaiterChecks() {
    }

    /**
     * Round trips where the receiving side waits: the waiter dispatches (its own thread runs the continuations,
     * counted by the engine), and after every wait the engine alone completes a receive nobody waits for (it takes
     * the queue back, armed: without that, nothing would ever complete it).
     */
    static void theWaiterDispatchesAndTheEngineTakesTheQueueBack(EnginePair p, Wait wait, int rounds)
            throws Exception {
        Thread me = Thread.currentThread();
        AtomicInteger onWaiter = new AtomicInteger();
        for (int i = 0; i < rounds; i++) {
            CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
            r.whenComplete((wc, e) -> {
                if (Thread.currentThread() == me) {
                    onWaiter.incrementAndGet();
                }
            });
            p.a.sendAsync(p.memA, 0, 64);
            assertThat(wait.until(r)).isTrue();
            assertThat(r.get().byteLength()).isEqualTo(64);

            CompletableFuture<WorkCompletion> alone = p.b.receiveAsync(p.memB, 4096, 64); // nobody waits for it
            p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
            assertThat(alone.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
        }
        // a message's round trip is far longer than the few instructions between the post and the wait
        assertThat(onWaiter.get()).as("receives dispatched on the waiting thread").isPositive();
        assertThat(p.engine.completionsByWaiters()).isGreaterThanOrEqualTo(onWaiter.get());
    }

    /**
     * A queue handed back and forth between a waiter and the engine in the middle of a stream still dispatches it
     * in the order it arrived: the caller waits for every 50th message, each time leaving the next ones to the
     * engine.
     */
    static void aStreamStaysInOrder(EnginePair p, Wait wait, int n) throws Exception {
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
        for (int i = 49; i < n; i += 50) {
            assertThat(wait.until(receives.get(i))).isTrue();
            if (i + 25 < n) {
                receives.get(i + 25).get(T, TimeUnit.SECONDS); // completed with nobody waiting
            }
        }
        sent.get(T, TimeUnit.SECONDS);
        CompletableFuture.allOf(receives.toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
        assertThat(order).hasSize(n).isSorted();
    }
}
