package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.WorkCompletion;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link CompletionEngine#blockWhileWaiting}: a caller that waits sleeps on its CQ's own completion channel and
 * dispatches the CQ's completions on its own thread (no hand-off from the engine's thread); the engine lends the
 * channel and takes it back once the caller left.
 */
@Tag("device")
class BlockingWaiterDeviceTest {
    private static final long T = 120;
    private static final long NANOS = TimeUnit.SECONDS.toNanos(T);

    private static EnginePair pair(PollingMode mode, int depth) throws Exception {
        return new EnginePair(mode, depth, 7, true);
    }

    /**
     * Round trips where the receiver blocks: its thread dispatches, and after every wait the engine alone completes a
     * receive nobody waits for (it takes the channel back, armed).
     */
    @Test
    void theWaiterDispatchesAndTheEngineTakesTheChannelBack() throws Exception {
        try (EnginePair p = pair(PollingMode.EVENT, 16)) {
            WaiterChecks.theWaiterDispatchesAndTheEngineTakesTheQueueBack(p,
                    f -> p.engine.blockWhileWaiting(p.cqB, f::isDone, NANOS), 30);
        }
    }

    /**
     * The waiter sleeps in the kernel rather than spinning: half a second of waiting for what never comes costs its
     * thread far less than half a second of CPU (a spinning waiter's would be about all of it).
     */
    @Test
    void theWaiterSleeps() throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        try (EnginePair p = pair(PollingMode.EVENT, 16)) {
            CompletableFuture<WorkCompletion> never = p.b.receiveAsync(p.memB, 0, 64);
            long cpu = mx.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            assertThat(p.engine.blockWhileWaiting(p.cqB, never::isDone, TimeUnit.MILLISECONDS.toNanos(500)))
                    .isFalse();
            long wall = System.nanoTime() - start;
            long used = mx.getCurrentThreadCpuTime() - cpu;
            assertThat(wall).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(500));
            assertThat(used).as("CPU time of %d ms of waiting", TimeUnit.NANOSECONDS.toMillis(wall))
                    .isLessThan(wall / 4);
            p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
            assertThat(never.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64); // the engine's again
        }
    }

    /** A stream handed back and forth between a blocking waiter and the engine is dispatched in order. */
    @Test
    void aStreamStaysInOrderAcrossTheWaiterAndTheEngine() throws Exception {
        try (EnginePair p = pair(PollingMode.EVENT, 512)) {
            WaiterChecks.aStreamStaysInOrder(p, f -> p.engine.blockWhileWaiting(p.cqB, f::isDone, NANOS), 300);
        }
    }

    /**
     * One waiter at a time; a queue without a channel of its own, an engine that polls, another engine's queue and
     * the engine's own thread are refused; an interrupt ends the wait within a slice, and so does the engine's close.
     */
    @Test
    void whatCannotWaitHereIsRefusedAndAWaitEnds() throws Exception {
        try (EnginePair p = pair(PollingMode.EVENT, 16)) {
            CompletableFuture<WorkCompletion> never = p.b.receiveAsync(p.memB, 0, 64);
            CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
            java.util.concurrent.CountDownLatch in = new java.util.concurrent.CountDownLatch(1);
            Thread waiter = Thread.ofPlatform().name("blocked").start(() -> {
                try {
                    p.engine.blockWhileWaiting(p.cqB, () -> {
                        in.countDown(); // asked first once this caller is the queue's waiter
                        return never.isDone();
                    }, NANOS);
                    interrupted.complete(null);
                } catch (Throwable t) {
                    interrupted.complete(t);
                }
            });
            assertThat(in.await(T, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            assertThat(p.engine.blockWhileWaiting(p.cqB, never::isDone, NANOS)).as("a second waiter").isFalse();
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(T / 4));
            waiter.interrupt();
            assertThat(interrupted.get(T, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);

            try (EnginePair shared = new EnginePair(PollingMode.EVENT, 16)) {
                assertThat(shared.engine.blockWhileWaiting(shared.cqB, never::isDone, NANOS)).as("shared channel")
                        .isFalse();
                assertThatThrownBy(() -> shared.engine.blockWhileWaiting(p.cqB, never::isDone, 1))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not driven by this engine");
            }
            CompletableFuture<Throwable> onEngine = new CompletableFuture<>();
            p.engine.execute(() -> {
                try {
                    p.engine.blockWhileWaiting(p.cqB, never::isDone, 1);
                    onEngine.complete(null);
                } catch (Throwable t) {
                    onEngine.complete(t);
                }
            });
            assertThat(onEngine.get(T, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("engine thread");

            java.util.concurrent.CountDownLatch in2 = new java.util.concurrent.CountDownLatch(1);
            CompletableFuture<Boolean> ended = CompletableFuture.supplyAsync(() -> {
                try {
                    return p.engine.blockWhileWaiting(p.cqB, () -> {
                        in2.countDown();
                        return false; // not never.isDone(): the close fails that future, which would end the wait too
                    }, NANOS);
                } catch (InterruptedException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            assertThat(in2.await(T, TimeUnit.SECONDS)).isTrue();
            p.engine.close();
            assertThat(ended.get(T, TimeUnit.SECONDS)).as("the wait of a closing engine").isFalse();
            assertThat(never).isCompletedExceptionally();
        }
        try (EnginePair polled = new EnginePair(PollingMode.BUSY_POLL, 16, 7, true)) {
            assertThat(polled.engine.blockWhileWaiting(polled.cqB, () -> false, NANOS)).as("busy-poll mode").isFalse();
        }
    }
    /**
     * A request with a future posted while a caller sleeps on the lent channel: as that caller leaves, the engine
     * takes the channel back at once (its next turn), not a millisecond later at one of its looks up to 8 ms apart,
     * which would make a later future's completion late.
     */
    @Test
    void aFuturePostedDuringABlockingWaitTakesTheChannelBackAsTheWaiterLeaves() throws Exception {
        try (EnginePair p = pair(PollingMode.EVENT, 16)) {
            for (int i = 0; i < 20; i++) {
                CompletableFuture<WorkCompletion> next = new CompletableFuture<>();
                java.util.concurrent.CountDownLatch asleep = new java.util.concurrent.CountDownLatch(1);
                int[] asked = new int[1];
                Thread waiter = Thread.ofPlatform().name("sleeper").start(() -> {
                    try {
                        p.engine.blockWhileWaiting(p.cqB, () -> {
                            if (++asked[0] == 2) {
                                asleep.countDown(); // asked again after a step: the channel is borrowed
                            }
                            return next.isDone();
                        }, NANOS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                assertThat(asleep.await(T, TimeUnit.SECONDS)).isTrue();
                assertThat(EngineProbe.lent(p.engine, p.cqB)).as("lent to the sleeper").isTrue();
                p.b.receiveAsync(p.memB, 64, 64).whenComplete((wc, e) -> next.complete(wc)); // a future: expect()
                p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS);
                assertThat(next.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
                waiter.join();
                EngineProbe.awaitTurn(p.engine); // a turn after the leaving waiter's wake-up
                assertThat(EngineProbe.lent(p.engine, p.cqB)).as("lent after the waiter left (round %d)", i).isFalse();
            }
        }
    }
    /**
     * A caller asleep for solicited completions only: a message sent without {@code IBV_SEND_SOLICITED} raises no
     * event (it is dispatched at the end of a 50 ms slice), a solicited one does, and a request with a future posted
     * meanwhile re-arms the queue for every completion, so that its completion raises one too. Counted in events
     * the sleeper read: each arming yields at most one.
     */
    @Test
    void aSolicitedOnlySleeperWakesForSolicitedMessagesAndExpectedCompletions() throws Exception {
        try (EnginePair p = pair(PollingMode.EVENT, 16)) {
            List<CompletableFuture<WorkCompletion>> received = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // posted before the lending: no future is expected during the sleep
                received.add(p.b.receiveAsync(p.memB, i * 64L, 64));
            }
            java.util.concurrent.CountDownLatch asleep = new java.util.concurrent.CountDownLatch(1);
            int[] asked = new int[1];
            long before = p.engine.waiterWakeUps();
            Thread waiter = Thread.ofPlatform().name("solicited-sleeper").start(() -> {
                try {
                    p.engine.blockWhileWaiting(p.cqB, () -> {
                        if (++asked[0] == 2) {
                            asleep.countDown();
                        }
                        return false;
                    }, NANOS, true);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(asleep.await(T, TimeUnit.SECONDS)).isTrue();
            // the first: solicited (it also takes the engine's arming for every completion, made at the queue's birth)
            sendSolicited(p);
            assertThat(received.get(0).get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            awaitWakeUps(p, before + 1);
            p.a.sendAsync(p.memA, 0, 64).get(T, TimeUnit.SECONDS); // unsolicited
            assertThat(received.get(1).get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            sendSolicited(p);
            assertThat(received.get(2).get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            awaitWakeUps(p, before + 2);

            CompletableFuture<WorkCompletion> r = p.a.receiveAsync(p.memA, 4096, 64);
            CompletableFuture<WorkCompletion> mine = p.b.sendAsync(p.memB, 0, 64); // a future: armed for every one
            assertThat(mine.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(64);
            awaitWakeUps(p, before + 3);
            waiter.interrupt();
            waiter.join(TimeUnit.SECONDS.toMillis(T));
            assertThat(waiter.isAlive()).isFalse();
            assertThat(p.engine.waiterWakeUps() - before).as("events: two solicited messages, one expected send")
                    .isEqualTo(3);
        }
    }

    private static void sendSolicited(EnginePair p) throws Exception {
        try (dev.rdma4j.SendBatch batch = new dev.rdma4j.SendBatch(1, 1)) {
            batch.send(1, p.memA, 0, 64).solicited();
            p.a.postAsync(batch).get(T, TimeUnit.SECONDS);
        }
    }

    /** Waits (at most T) until sleepers of {@code p}'s engine read {@code n} events in all. */
    private static void awaitWakeUps(EnginePair p, long n) {
        long deadline = System.nanoTime() + NANOS;
        while (p.engine.waiterWakeUps() < n) {
            assertThat(System.nanoTime()).as("events read by the sleeper: %d, waiting for %d",
                    p.engine.waiterWakeUps(), n).isLessThan(deadline);
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
