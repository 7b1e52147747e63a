package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What the futures of an engine's queue pairs do when the engine dies, a CQ breaks, or a callback closes. */
@Tag("device")
class EngineLifecycleDeviceTest {
    private static final long T = 120;

    /** When the engine thread died, pending futures hung and later posts were accepted. */
    @Test
    void anEngineThatDiesFailsPendingFuturesWithTheCauseAndLaterPostsAtOnce() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            CompletableFuture<WorkCompletion> pending = p.b.receiveAsync(p.memB, 0, 64);
            Error boom = new Error("boom");
            p.engine.execute(() -> {
                throw boom;
            });
            assertThatThrownBy(() -> pending.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(WorkRequestException.class).hasMessageContaining("died").hasCause(boom);
            assertThat(p.engine.terminationCause()).containsSame(boom);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (!p.engine.isTerminated() && System.nanoTime() < deadline) {
                Thread.sleep(1); // the futures fail first, then the fds close, then it counts as terminated
            }
            assertThat(p.engine.isTerminated()).isTrue();
            assertThatThrownBy(() -> p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("died").hasCause(boom);
            assertThat(p.b.receiveRoom()).isEqualTo(p.b.queuePair().capabilities().maxRecvWr());
        }
    }

    /**
     * A CQ whose {@code ibv_poll_cq} fails used to be dropped silently and its futures hung. rxe's poll never
     * fails, so the failure is injected at the point where the engine would see it.
     */
    @Test
    void aCompletionQueueThatFailsInPollFailsTheFuturesOfItsQueuePairs() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            CompletableFuture<WorkCompletion> onB = p.b.receiveAsync(p.memB, 0, 64);
            CompletableFuture<WorkCompletion> onA = p.a.receiveAsync(p.memA, 0, 64);
            VerbsException broken = new VerbsException("ibv_poll_cq", 5, "Input/output error", "test");
            EngineProbe.simulatePollFailure(p.engine, p.cqB, broken);
            assertThatThrownBy(() -> onB.get(T, TimeUnit.SECONDS)).cause().isInstanceOf(WorkRequestException.class)
                    .hasCause(broken);
            assertThatThrownBy(() -> p.b.receiveAsync(p.memB, 0, 64).get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("completion queue");
            assertThat(onA).as("a's CQ is fine").isNotDone();
            CompletableFuture<WorkCompletion> w = p.a.writeAsync(p.memA, 0, 8, p.memB.remote(), 128);
            assertThat(w.get(T, TimeUnit.SECONDS).isSuccess()).isTrue();
        }
    }

    /**
     * A completion callback (on the engine thread) that closes its queue pair and its CQ: the engine goes on
     * completing other work and closes normally.
     */
    @Test
    void aCallbackMayCloseItsQueuePairAndCompletionQueue() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch closed = new CountDownLatch(1);
            p.b.receiveAsync(p.memB, 0, 64).whenComplete((c, e) -> {
                try {
                    p.b.close();
                    p.cqB.close();
                } catch (Throwable t) {
                    failure.set(t);
                } finally {
                    closed.countDown();
                }
            });
            p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS);
            assertThat(closed.await(T, TimeUnit.SECONDS)).isTrue();
            assertThat(failure.get()).isNull();
            assertThat(p.cqB.isClosed()).isTrue();
            CountDownLatch alive = new CountDownLatch(1);
            p.engine.execute(alive::countDown);
            assertThat(alive.await(T, TimeUnit.SECONDS)).as("the engine still runs").isTrue();
            assertThat(p.engine.isTerminated()).isFalse();
        }
    }
}
