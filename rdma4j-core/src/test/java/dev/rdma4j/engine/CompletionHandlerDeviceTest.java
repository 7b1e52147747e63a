package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QueuePair;
import dev.rdma4j.TestDevice;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WorkCompletion;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link CompletionEngine#createCompletionQueueWithHandler}: the engine hands each completion of a plain queue
 * pair to the handler in place, on its thread; the view refuses use after the call; a throwing handler is
 * counted and the engine goes on.
 */
@Tag("device")
class CompletionHandlerDeviceTest {
    private static final long T = 120;

    /** What the handler saw of one completion, read during the call. */
    record Seen(long wrId, boolean receive, WcOpcode opcode, int bytes, boolean onEngineThread) {
    }

    @Test
    void theHandlerReadsEachCompletionInPlaceOnTheEngineThread() throws Exception {
        ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
        int n = 20;
        CountDownLatch all = new CountDownLatch(2 * n);
        AtomicReference<CompletionView> kept = new AtomicReference<>();
        AtomicReference<WorkCompletion> copy = new AtomicReference<>();
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-handler").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            CompletionQueue cq = engine.createCompletionQueueWithHandler(ctx, 256, v -> {
                seen.add(new Seen(v.wrId(), v.isReceive(), v.opcode(), v.byteLength(), engine.inEngineThread()));
                kept.set(v);
                copy.set(v.toCompletion());
                all.countDown();
            });
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 32);
            try (MemoryRegion mem = pd.allocate(1 << 16, EnginePair.ALL)) {
                for (int i = 0; i < n; i++) {
                    qp[1].postReceive(1000 + i, mem, 4096 + 64L * i, 64);
                }
                for (int i = 0; i < n; i++) {
                    qp[0].postSend(i, mem, 0, 8 + i);
                }
                assertThat(all.await(T, TimeUnit.SECONDS)).as("every completion reached the handler").isTrue();
                List<Seen> got = List.copyOf(seen);
                assertThat(got).hasSize(2 * n);
                assertThat(got).allMatch(Seen::onEngineThread);
                List<Seen> sends = got.stream().filter(s -> !s.receive()).toList();
                List<Seen> recvs = got.stream().filter(Seen::receive).toList();
                assertThat(sends).extracting(Seen::wrId).containsExactlyElementsOf(
                        java.util.stream.LongStream.range(0, n).boxed().toList());
                assertThat(sends).allMatch(s -> s.opcode() == WcOpcode.SEND);
                assertThat(recvs).extracting(Seen::wrId).containsExactlyElementsOf(
                        java.util.stream.LongStream.range(1000, 1000 + n).boxed().toList());
                assertThat(recvs).extracting(Seen::bytes).containsExactlyElementsOf(
                        java.util.stream.IntStream.range(8, 8 + n).boxed().toList());
                assertThatThrownBy(() -> kept.get().wrId()).as("the view on another thread")
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("on its engine thread");
                CompletableFuture<Throwable> onEngine = new CompletableFuture<>();
                engine.execute(() -> { // the engine thread, between handler calls
                    try {
                        kept.get().wrId();
                        onEngine.complete(null);
                    } catch (RuntimeException e) {
                        onEngine.complete(e);
                    }
                });
                assertThat(onEngine.get(T, TimeUnit.SECONDS)).as("the view after its call, on the engine thread")
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("only during");
                assertThat(copy.get()).as("the copy outlives the call").isNotNull();
                assertThat(copy.get().wrId()).isIn(n - 1L, 1000L + n - 1);
            } finally {
                qp[0].close();
                qp[1].close();
                cq.close();
            }
        }
    }

    /**
     * The engine's whole turn in EVENT mode (epoll_wait, the channel's readiness, ibv_get_cq_event, the batched
     * ack, re-arming, draining, the handler's view) and the poster's tryPost allocate nothing once warm: the JVM's
     * per-thread counters of both threads around 1,000 RDMA writes, each completed through the handler before the
     * next is posted (so every completion takes the event path). Counted in this device's C1-compiled guest too.
     */
    @Test
    void eventDispatchToAHandlerAllocatesNothing() throws Exception {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.concurrent.atomic.AtomicLong handled = new java.util.concurrent.atomic.AtomicLong();
        AtomicReference<Thread> engineThread = new AtomicReference<>();
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-alloc").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             dev.rdma4j.SendBatch write = new dev.rdma4j.SendBatch(1, 1)) {
            CompletionQueue cq = engine.createCompletionQueueWithHandler(ctx, 64, v -> {
                if (!v.isSuccess()) {
                    throw new IllegalStateException("completion failed: " + v.status());
                }
                engineThread.compareAndSet(null, Thread.currentThread());
                handled.lazySet(handled.get() + 1); // written by the engine thread only
            });
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 16);
            try (MemoryRegion mem = pd.allocate(1 << 12, EnginePair.ALL)) {
                write.write(7, mem, 0, 64, mem.remote(), 2048);
                writes(qp[0], write, handled, 2_000); // warm up: class loading, linking, JIT
                dev.rdma4j.testing.JitQuiet.untilQuiet(() -> writes(qp[0], write, handled, 1_000));
                long poster = Thread.currentThread().threadId();
                long engineId = engineThread.get().threadId();
                long before = threads.getThreadAllocatedBytes(poster);
                long engineBefore = threads.getThreadAllocatedBytes(engineId);
                sink = new byte[100_000]; // positive control: the counter sees a known allocation
                long control = threads.getThreadAllocatedBytes(poster) - before;
                before += control; // asserted after the count: AssertJ's first use in a JVM allocates ~69 KB

                int n = 1_000;
                writes(qp[0], write, handled, n);
                long posterAllocated = threads.getThreadAllocatedBytes(poster) - before;
                long engineAllocated = threads.getThreadAllocatedBytes(engineId) - engineBefore;
                assertThat(control).isGreaterThanOrEqualTo(100_000);
                System.out.printf("engine dispatch: %d writes, engine thread %d B, poster %d B%n", n,
                        engineAllocated, posterAllocated);
                // nothing per completion; a few hundred bytes of one-off noise (a deoptimisation) are tolerated
                assertThat(engineAllocated).as("engine thread, %d completions", n).isLessThan(1024);
                assertThat(posterAllocated).as("poster, %d posts", n).isLessThan(1024);
            } finally {
                qp[0].close();
                qp[1].close();
                cq.close();
            }
        }
    }

    static volatile byte[] sink;

    /** Posts {@code write} {@code n} times, each after the handler took the previous one's completion. */
    private static void writes(QueuePair qp, dev.rdma4j.SendBatch write, java.util.concurrent.atomic.AtomicLong handled,
            int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
        for (int i = 0; i < n; i++) {
            long target = handled.get() + 1;
            int rc = qp.tryPost(write);
            if (rc != 0) {
                throw new AssertionError("tryPost: errno " + rc);
            }
            while (handled.get() < target) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no completion within " + T + " s (write " + i + ")");
                }
                Thread.onSpinWait();
            }
        }
    }

    /**
     * In EVENT mode a completion whose dispatch posted no send ends the drain once a poll emptied the CQ: one
     * {@code ibv_poll_cq} an event (the CQ was armed before it was polled: the next completion raises an event).
     * Before, the drain polled once more after every dispatching poll, finding nothing: two polls an event (each of
     * send_lat -e's four events an iteration). Each write is completed, and the engine's turn over, before the next
     * is posted, so every completion comes by its own event and no post races a drain.
     */
    @Test
    void aDispatchThatPostedNothingEndsTheDrain() throws Exception {
        java.util.concurrent.atomic.AtomicLong handled = new java.util.concurrent.atomic.AtomicLong();
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-drain-end").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             dev.rdma4j.SendBatch write = new dev.rdma4j.SendBatch(1, 1)) {
            CompletionQueue cq = engine.createCompletionQueueWithHandler(ctx, 64, v -> {
                if (v.isSuccess()) {
                    handled.lazySet(handled.get() + 1); // written by the engine thread only
                }
            });
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 16);
            try (MemoryRegion mem = pd.allocate(1 << 12, EnginePair.ALL)) {
                write.write(7, mem, 0, 64, mem.remote(), 2048);
                int n = 40;
                long before = EngineProbe.polls(engine);
                for (int i = 0; i < n; i++) {
                    writes(qp[0], write, handled, 1);
                    EngineProbe.awaitTurn(engine); // the drain that dispatched it is over
                }
                long polls = EngineProbe.polls(engine) - before;
                assertThat(handled.get()).isEqualTo(n);
                assertThat(polls).as("the engine's polls for %d completions, each its own event", n)
                        .isBetween((long) n, n + 2L);
            } finally {
                qp[0].close();
                qp[1].close();
                cq.close();
            }
        }
    }

    @Test
    void aThrowingHandlerIsCountedAndTheEngineGoesOn() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch eight = new CountDownLatch(8);
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-handler-throws").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            CompletionQueue cq = engine.createCompletionQueueWithHandler(ctx, 64, v -> {
                calls.incrementAndGet();
                eight.countDown();
                throw new IllegalStateException("a handler that fails (wr_id " + v.wrId() + ")");
            });
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 16);
            try (MemoryRegion mem = pd.allocate(1 << 12, EnginePair.ALL)) {
                long before = engine.callbackFailures();
                for (int i = 0; i < 4; i++) {
                    qp[1].postReceive(i, mem, 1024 + 64L * i, 64);
                    qp[0].postSend(i, mem, 0, 8);
                }
                assertThat(eight.await(T, TimeUnit.SECONDS)).as("8 completions within %d s", T).isTrue();
                // the latch opened inside the 8th call, before the engine counted its failure: a task queued now runs
                // on the engine thread after that call returned (a read of the count right away raced it, 1 run in ~5)
                CompletableFuture<Void> after = new CompletableFuture<>();
                engine.execute(() -> after.complete(null));
                after.get(T, TimeUnit.SECONDS);
                assertThat(calls.get()).as("every completion reached the handler").isEqualTo(8);
                assertThat(engine.callbackFailures() - before).isEqualTo(8);
                assertThat(engine.isTerminated()).isFalse();
            } finally {
                qp[0].close();
                qp[1].close();
                cq.close();
            }
        }
        try (CompletionEngine e = CompletionEngine.builder().name("test-engine-handler-null").build()) {
            assertThatThrownBy(() -> e.createCompletionQueueWithHandler(null, 1, null))
                    .isInstanceOf(NullPointerException.class).hasMessageContaining("handler");
        }
    }
}
