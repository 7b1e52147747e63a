package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An engine driven by its caller's loop ({@code externallyDriven()}, {@code runOnce}, {@code wakeUp}), as Netty's
 * event loop drives it through rdma4j-netty's IoHandler: thread binding, wake-ups from other threads, tasks, and
 * both ways of closing it. Needs libibverbs only (epoll and an eventfd; no device).
 */
class ExternallyDrivenEngineTest {

    private static CompletionEngine driven(String name) throws Exception {
        return CompletionEngine.builder().name(name).externallyDriven().build();
    }

    @Test
    void theFirstThreadToTurnItBecomesItsThreadAndOthersAreRefused() throws Exception {
        CompletionEngine engine = driven("bind");
        assertThat(engine.isExternallyDriven()).isTrue();
        assertThat(engine.inEngineThread()).isFalse();
        assertThat(engine.runOnce(0)).isZero();
        assertThat(engine.inEngineThread()).isTrue();
        CompletableFuture<Throwable> other = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                engine.runOnce(0);
                other.complete(null);
            } catch (Throwable t) {
                other.complete(t);
            }
        });
        assertThat(other.get(20, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is driven by thread " + Thread.currentThread().getName());
        assertThatThrownBy(() -> engine.runOnce(-2)).isInstanceOf(IllegalArgumentException.class);
        engine.close();
        assertThat(engine.isTerminated()).isTrue();
    }

    @Test
    void aTaskFromAnotherThreadWakesALoopBlockedInEpoll() throws Exception {
        CompletionEngine engine = driven("wake");
        engine.runOnce(0);
        AtomicInteger ran = new AtomicInteger();
        Thread submitter = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < 100; i++) {
                engine.execute(ran::incrementAndGet);
            }
        });
        // runOnce(-1) waits until the eventfd wakes it: each turn returns once something ran
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ran.get() < 100) {
            assertThat(System.nanoTime()).as("tasks run: %d of 100", ran.get()).isLessThan(deadline);
            engine.runOnce(1_000);
        }
        submitter.join();
        assertThat(ran.get()).isEqualTo(100);
        engine.close(); // on its thread: shuts down now
        assertThat(engine.isTerminated()).isTrue();
        assertThatThrownBy(() -> engine.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
        assertThat(engine.runOnce(0)).isZero(); // later turns do nothing
    }

    @Test
    void wakeUpEndsAnIndefiniteWait() throws Exception {
        CompletionEngine engine = driven("wake-up");
        engine.runOnce(0);
        Thread.ofPlatform().start(engine::wakeUp);
        assertThat(engine.runOnce(-1)).as("the wake-up is the work").isEqualTo(1);
        engine.close();
    }

    @Test
    void aCloseFromAnotherThreadReturnsAtOnceAndTheNextTurnFinishesIt() throws Exception {
        CompletionEngine engine = driven("foreign-close");
        engine.runOnce(0);
        AtomicInteger ran = new AtomicInteger();
        engine.execute(ran::incrementAndGet); // queued before the close: runs in the shut-down
        CompletableFuture<Void> closed = CompletableFuture.runAsync(engine::close);
        closed.get(20, TimeUnit.SECONDS); // never waits for the loop
        assertThat(engine.isClosed()).isTrue();
        assertThat(engine.isTerminated()).isFalse();
        engine.runOnce(-1); // woken by the close; shuts down
        assertThat(engine.isTerminated()).isTrue();
        assertThat(ran.get()).isEqualTo(1);
    }

    @Test
    void aCloseFromACallbackEndsTheEngineWhenItsTurnEnds() throws Exception {
        CompletionEngine engine = driven("close-in-callback");
        engine.runOnce(0);
        AtomicInteger after = new AtomicInteger();
        engine.execute(engine::close); // on the engine's thread, inside a turn
        engine.execute(after::incrementAndGet); // queued before the close began: still runs
        engine.runOnce(1_000);
        assertThat(engine.isTerminated()).isTrue();
        assertThat(engine.terminationCause()).as("a close, not a death").isEmpty();
        assertThat(after.get()).isEqualTo(1);
    }

    @Test
    void anEngineNeverTurnedRefusesWorkThatWouldWaitForeverAndClosesAnywhere() throws Exception {
        CompletionEngine engine = driven("never-turned");
        assertThatThrownBy(() -> engine.watch(0, () -> { })).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no loop has called runOnce");
        engine.close();
        assertThat(engine.isTerminated()).isTrue();
    }

    @Test
    void anEngineWithItsOwnThreadRefusesRunOnce() throws Exception {
        try (CompletionEngine engine = CompletionEngine.builder().name("own").build()) {
            assertThat(engine.isExternallyDriven()).isFalse();
            assertThatThrownBy(() -> engine.runOnce(0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("externallyDriven");
        }
    }
}
