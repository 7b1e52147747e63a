package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The engine's life cycle without a device: tasks racing close, wake-ups, death by an error, close from the
 * engine thread, fds (issue 9, "engine life cycle"; Netty's event loop is the model). Needs libibverbs only.
 */
class EngineLifecycleTest {

    /**
     * {@code call()} racing {@code close()} used to queue its task after the loop's last run of the task
     * queue, and its caller waited forever. Now every task is either run or rejected, and no caller hangs.
     */
    @Test
    void aTaskRacingCloseIsRunOrRejectedAndNoCallerHangs() throws Exception {
        int ran = 0;
        int rejected = 0;
        for (int i = 0; i < 300; i++) {
            CompletionEngine engine = CompletionEngine.builder().name("race-" + i).build();
            AtomicReference<Object> outcome = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(1);
            Thread caller = Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    engine.call(() -> { });
                    outcome.set("ran");
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            go.countDown();
            if ((i & 1) == 0) {
                Thread.onSpinWait();
            }
            engine.close();
            caller.join(TimeUnit.SECONDS.toMillis(20));
            assertThat(caller.isAlive()).as("call() still waiting after close, round %d", i).isFalse();
            if ("ran".equals(outcome.get())) {
                ran++;
            } else {
                // issue 29: the engine's internal calls (createCompletionQueue, watch, busyPoll) say
                // IllegalStateException, as they do once the close is over, not RejectedExecutionException
                assertThat(outcome.get()).isInstanceOf(IllegalStateException.class);
                assertThat(((Throwable) outcome.get()).getMessage()).contains("closed");
                rejected++;
            }
            assertThat(engine.isTerminated()).isTrue();
        }
        assertThat(ran + rejected).isEqualTo(300);
    }

    /**
     * Issue 29: {@code createCompletionQueue} or {@code watch} racing {@code close()} threw
     * {@code RejectedExecutionException} (undocumented) when the close came between their open check and their
     * task; after the close they throw {@code IllegalStateException}. Both ways are now the latter.
     */
    @Test
    void theEnginesOwnCallsAfterCloseAreIllegalState() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().name("closed-call").build();
        engine.close();
        assertThatThrownBy(() -> engine.call(() -> { })).isInstanceOf(IllegalStateException.class)
                .hasMessage("CompletionEngine closed-call is closed");
        assertThatThrownBy(() -> engine.watch(0, () -> { })).isInstanceOf(IllegalStateException.class)
                .hasMessage("CompletionEngine closed-call is closed");
    }

    @Test
    void executeAfterCloseIsRejectedAndTasksQueuedBeforeItRun() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().name("reject").build();
        CountDownLatch block = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        engine.execute(() -> awaitQuietly(block));
        for (int i = 0; i < 10; i++) {
            engine.execute(ran::incrementAndGet);
        }
        Thread closer = Thread.ofPlatform().start(engine::close);
        while (!engine.isClosed()) {
            Thread.onSpinWait();
        }
        assertThatThrownBy(() -> engine.execute(ran::incrementAndGet)).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("closed");
        block.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(20));
        assertThat(closer.isAlive()).isFalse();
        assertThat(ran.get()).as("tasks queued before close() ran").isEqualTo(10);
        assertThat(engine.isTerminated()).isTrue();
        assertThat(engine.terminationCause()).isEmpty();
    }

    /**
     * Every submission used to write the eventfd. Now a wake-up written and not yet consumed covers the
     * ones after it: 1,000 tasks from 4 threads while the engine thread is busy cost a few writes.
     */
    @Test
    void wakeUpsAreCoalesced() throws Exception {
        try (CompletionEngine engine = CompletionEngine.builder().name("coalesce").build()) {
            CountDownLatch busy = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            engine.execute(() -> {
                started.countDown();
                awaitQuietly(busy);
            });
            started.await();
            long before = EngineProbe.wakeWrites(engine);
            AtomicInteger ran = new AtomicInteger();
            List<Thread> submitters = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                submitters.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 250; i++) {
                        engine.execute(ran::incrementAndGet);
                    }
                }));
            }
            for (Thread s : submitters) {
                s.join();
            }
            busy.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (ran.get() < 1000 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(ran.get()).isEqualTo(1000);
            assertThat(EngineProbe.wakeWrites(engine) - before).as("eventfd writes for 1,000 tasks").isBetween(1L, 3L);
        }
    }

    /**
     * When the engine thread died, callers could not tell. A {@code RuntimeException} from a task is counted
     * and the engine goes on; an {@code Error} ends it, and says why.
     */
    @Test
    void anErrorEndsTheEngineAndSaysWhyARuntimeExceptionDoesNot() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().name("dies").build();
        CountDownLatch after = new CountDownLatch(1);
        engine.execute(() -> {
            throw new IllegalArgumentException("a bad task");
        });
        engine.execute(after::countDown);
        assertThat(after.await(20, TimeUnit.SECONDS)).as("the engine went on after a RuntimeException").isTrue();
        assertThat(engine.callbackFailures()).isEqualTo(1);
        assertThat(engine.isTerminated()).isFalse();

        Error boom = new Error("boom");
        engine.execute(() -> {
            throw boom;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!engine.isTerminated() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(engine.isTerminated()).isTrue();
        assertThat(engine.isClosed()).isTrue();
        assertThat(engine.terminationCause()).containsSame(boom);
        assertThatThrownBy(() -> engine.execute(() -> { })).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("died").hasCause(boom);
        engine.close(); // returns at once
    }

    /** close() on the engine thread (from a callback) used to close the fds under the running loop. */
    @Test
    void closeFromTheEngineThreadStopsTheEngineWhenTheCallbackReturns() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().name("self-close").build();
        AtomicReference<Boolean> terminatedInside = new AtomicReference<>();
        engine.execute(() -> {
            engine.close();
            terminatedInside.set(engine.isTerminated());
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!engine.isTerminated() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(engine.isTerminated()).isTrue();
        assertThat(terminatedInside.get()).as("close() returned at once on the engine thread").isFalse();
        assertThat(engine.terminationCause()).isEmpty();
        assertThat(engine.callbackFailures()).isZero();
    }

    /** Concurrent closers all return once the engine has stopped; engines leave no fd behind. */
    @Test
    void concurrentClosesReturnAndNoFileDescriptorLeaks() throws Exception {
        long before = dev.rdma4j.OpenFds.count();
        for (int i = 0; i < 100; i++) {
            CompletionEngine engine = CompletionEngine.builder().name("closers-" + i).build();
            engine.execute(() -> { });
            List<Thread> closers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                closers.add(Thread.ofVirtual().start(engine::close));
            }
            for (Thread c : closers) {
                c.join(TimeUnit.SECONDS.toMillis(20));
                assertThat(c.isAlive()).isFalse();
            }
            assertThat(engine.isTerminated()).isTrue();
        }
        assertThat(dev.rdma4j.OpenFds.count()).isLessThanOrEqualTo(before + 4);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
