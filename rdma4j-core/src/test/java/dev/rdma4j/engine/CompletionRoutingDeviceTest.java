package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.TestDevice;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How the engine finds the request a completion belongs to, and what an {@link AsyncQueuePair} learns when
 * its queue pair is closed or reset behind its back (issue 9: completion routing).
 */
@Tag("device")
class CompletionRoutingDeviceTest {
    private static final long T = 120;

    /**
     * The engine used to route every completion by the top 16 bits of its wr_id, so a plain QP's caller
     * wr_id that looked like an async request's ({@code owner<<48 | generation<<32 | slot}) completed that
     * request's future with someone else's completion. Now completions are routed by the queue pair rdma4j
     * recorded for them; a caller's wr_id is never interpreted.
     */
    @Test
    void aPlainQueuePairsWrIdNeverCompletesAnAsyncRequest() throws Exception {
        ConcurrentLinkedQueue<WorkCompletion> plain = new ConcurrentLinkedQueue<>();
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-routing").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            CompletionQueue cq = engine.createCompletionQueue(ctx, 1024, plain::add);
            QueuePair[] asyncSide = connectedPair(pd, cq, 16);
            QueuePair[] plainSide = connectedPair(pd, cq, 160);
            AsyncQueuePair a = engine.wrap(asyncSide[0]);
            AsyncQueuePair b = engine.wrap(asyncSide[1]);
            try (MemoryRegion mem = pd.allocate(1 << 16, EnginePair.ALL)) {
                // the first request of a fresh async QP: slot 0, generation 1; its owner index is small
                CompletableFuture<WorkCompletion> ra = a.receiveAsync(mem, 0, 64);
                CompletableFuture<WorkCompletion> rb = b.receiveAsync(mem, 64, 64);
                int n = 128;
                for (int i = 0; i < n; i++) {
                    plainSide[1].postReceive(i, mem, 4096 + 64L * (i % 16), 64);
                }
                for (int owner = 1; owner <= n; owner++) {
                    plainSide[0].postSend(((long) owner << 48) | (1L << 32), mem, 1024, 8);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
                while (plain.size() < 2 * n && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(plain).as("the plain QP's completions go to the fallback").hasSize(2 * n);
                assertThat(ra).as("a's receive was not completed by a plain send").isNotDone();
                assertThat(rb).as("b's receive was not completed by a plain send").isNotDone();
                // and the async requests still complete with their own completions
                a.sendAsync(mem, 2048, 8).get(T, TimeUnit.SECONDS);
                assertThat(rb.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(8);
                b.sendAsync(mem, 2048, 8).get(T, TimeUnit.SECONDS);
                assertThat(ra.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(8);
            } finally {
                a.close();
                b.close();
                plainSide[0].close();
                plainSide[1].close();
                cq.close();
            }
        }
    }

    /**
     * A pending future of an {@link AsyncQueuePair} whose {@link QueuePair} was closed directly (not
     * through the wrapper) never completed, its room was never given back, and later posts were accepted.
     */
    @Test
    void closingTheWrappedQueuePairDirectlyFailsPendingFuturesAndLaterPosts() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            CompletableFuture<WorkCompletion> pending = p.b.receiveAsync(p.memB, 0, 64);
            p.b.queuePair().close();
            assertThatThrownBy(() -> pending.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(WorkRequestException.class).hasMessageContaining("closed");
            assertThat(p.b.receiveRoom()).isEqualTo(p.b.queuePair().capabilities().maxRecvWr());
            assertThatThrownBy(() -> p.b.receiveAsync(p.memB, 0, 64).get(T, TimeUnit.SECONDS))
                    .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
    }

    /**
     * After {@code queuePair().reset()} a pending receive never completed, and after reset and reconnect
     * {@code receiveAsync} failed with "queue full" (the wrapper's room and pending table did not learn of
     * the reset). Now the reset fails the pending futures, gives the room back, and the reconnected pair works.
     */
    @Test
    void resettingTheWrappedQueuePairFailsPendingFuturesAndGivesTheRoomBack() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            int capacity = p.b.queuePair().capabilities().maxRecvWr();
            List<CompletableFuture<WorkCompletion>> receives = new ArrayList<>();
            for (int i = 0; i < capacity; i++) {
                receives.add(p.b.receiveAsync(p.memB, 64L * i, 64));
            }
            assertThat(p.b.receiveRoom()).isZero();
            p.a.queuePair().reset();
            p.b.queuePair().reset();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (CompletableFuture<WorkCompletion> f : receives) {
                long left = Math.max(1, deadline - System.nanoTime());
                assertThatThrownBy(() -> f.get(left, TimeUnit.NANOSECONDS)).cause()
                        .isInstanceOf(WorkRequestException.class).hasMessageContaining("reset");
            }
            assertThat(p.b.receiveRoom()).isEqualTo(capacity);
            reconnect(p.a.queuePair(), p.b.queuePair());
            for (int round = 0; round < 3 * capacity; round++) {
                CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
                p.a.sendAsync(p.memA, 0, 16).get(T, TimeUnit.SECONDS);
                assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(16);
            }
            assertThat(p.b.receiveRoom()).isEqualTo(capacity);
        }
    }

    /** The engine's owner table used to keep every wrapper whose QP was closed directly reachable forever. */
    @Test
    void aWrapperWhoseQueuePairWasClosedDirectlyIsNotRetained() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            List<WeakReference<AsyncQueuePair>> refs = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                QueuePair qp = QueuePair.builder(p.pd, QpType.RC).completionQueue(p.cqA).capacity(4, 4).build();
                AsyncQueuePair aq = p.engine.wrap(qp);
                refs.add(new WeakReference<>(aq));
                qp.close();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (refs.stream().anyMatch(r -> r.get() != null) && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(50);
            }
            assertThat(refs.stream().filter(r -> r.get() != null).count()).as("wrappers still reachable").isZero();
        }
    }

    /** The wrapper owns its QP's wr_ids: a direct post would complete no future, so it is refused. */
    @Test
    void postingDirectlyOnAWrappedQueuePairIsRefused() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            assertThatThrownBy(() -> p.a.queuePair().postSend(7, p.memA, 0, 8))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("AsyncQueuePair");
            assertThatThrownBy(() -> p.b.queuePair().postReceive(7, p.memB, 0, 8))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("AsyncQueuePair");
            assertThatThrownBy(() -> p.engine.wrap(p.a.queuePair()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
            // the wrapper itself still posts
            CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
            p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS);
            assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(8);
        }
    }

    /**
     * {@code engine.wrap(qp)} accepted a QP whose CQs the engine does not drive, and its futures never
     * completed; an engine-driven CQ could be polled by hand, stealing the engine's completions (issue 10).
     */
    @Test
    void aQueuePairOnForeignCqsCannotBeWrappedAndAnEngineCqCannotBePolledByHand() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8);
             CompletionQueue plainCq = p.ctx.createCompletionQueue(16);
             QueuePair onPlain = QueuePair.builder(p.pd, QpType.RC).completionQueue(plainCq).build();
             QueuePair mixed = QueuePair.builder(p.pd, QpType.RC).sendCompletionQueue(p.cqA)
                     .receiveCompletionQueue(plainCq).build();
             dev.rdma4j.WorkCompletions wcs = new dev.rdma4j.WorkCompletions(4)) {
            assertThatThrownBy(() -> p.engine.wrap(onPlain)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not driven by this engine");
            assertThatThrownBy(() -> p.engine.wrap(mixed)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("receive CQ");
            assertThatThrownBy(() -> p.cqA.poll(wcs)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("driven by the completion engine test-engine-EVENT");
            assertThat(plainCq.poll(wcs)).isZero();
            // the engine itself still completes the wrappers' futures
            CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
            p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS);
            assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(8);
        }
    }

    /**
     * A poll whose whole batch was a destroyed queue pair's completions (dropped: nothing waits for them) kept none,
     * and the engine took that for an empty CQ: it armed the CQ and stopped, and a live queue pair's completion
     * behind them stayed in the CQ until some later completion raised an event (none here: for good). The engine
     * thread is held by a task while the completions gather, so that it meets them all at once: 100 receive
     * completions of a queue pair then destroyed (3 full batches of the engine's 32 and a part), then one receive of
     * a live queue pair. Each is known to be in the CQ before the next step: the responder writes a receive's
     * completion before it acknowledges the send, whose completion is polled here by hand.
     */
    @Test
    void aFullBatchOfDroppedCompletionsIsNotTakenForAnEmptyQueue() throws Exception {
        int dropped = 100;
        CompletableFuture<WorkCompletion> live = new CompletableFuture<>();
        CountDownLatch gate = new CountDownLatch(1);
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-dropped").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionQueue byHand = ctx.createCompletionQueue(256);
             WorkCompletions wcs = new WorkCompletions(16);
             MemoryRegion mem = pd.allocate(1 << 14, EnginePair.ALL)) {
            CompletionQueue cq = engine.createCompletionQueue(ctx, 1024, wc -> {
                if (wc.wrId() == 777) {
                    live.complete(wc);
                }
            });
            QueuePair gone = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(dropped, dropped).build();
            QueuePair goneSender = QueuePair.builder(pd, QpType.RC).completionQueue(byHand).capacity(dropped, dropped)
                    .build();
            QueuePair kept = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(4, 4).build();
            QueuePair keptSender = QueuePair.builder(pd, QpType.RC).completionQueue(byHand).capacity(4, 4).build();
            try {
                reconnect(gone, goneSender);
                reconnect(kept, keptSender);
                holdTheEngine(engine, gate);
                leaveDroppedCompletions(gone, goneSender, byHand, wcs, mem, dropped);
                kept.postReceive(777, mem, 4096, 64);
                keptSender.postSend(778, mem, 8192, 8);
                awaitByHand(byHand, wcs, 1);
                gate.countDown();
                assertThat(live.get(30, TimeUnit.SECONDS).byteLength())
                        .as("the live queue pair's receive, behind 100 dropped completions, is dispatched")
                        .isEqualTo(8);
            } finally {
                gate.countDown();
                kept.close();
                closeTheRest(keptSender, goneSender, gone, cq);
            }
        }
    }

    /**
     * A caller blocking on a CQ's own channel ({@link CompletionEngine#blockWhileWaiting}) behind 100 completions of a
     * queue pair then destroyed: its step polls on while a poll's batch was all dropped, as the engine's drain does.
     * It slept on the first such batch, with a live queue pair's receive in the CQ, for which no event would come
     * (it was there before the arming), until its time ran out (2026-11-30 (b); before, two such batches did it).
     * The engine's thread is held meanwhile: only the caller polls.
     */
    @Test
    void aBlockingCallerDoesNotSleepOnAFullBatchOfDroppedCompletions() throws Exception {
        int dropped = 100;
        CountDownLatch gate = new CountDownLatch(1);
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT)
                     .name("test-engine-dropped-waiter").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionQueue byHand = ctx.createCompletionQueue(256);
             WorkCompletions wcs = new WorkCompletions(16);
             MemoryRegion mem = pd.allocate(1 << 14, EnginePair.ALL)) {
            CompletionQueue cq = engine.createCompletionQueueWithOwnChannel(ctx, 1024);
            QueuePair gone = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(dropped, dropped).build();
            QueuePair goneSender = QueuePair.builder(pd, QpType.RC).completionQueue(byHand).capacity(dropped, dropped)
                    .build();
            QueuePair kept = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(4, 4).build();
            QueuePair keptSender = QueuePair.builder(pd, QpType.RC).completionQueue(byHand).capacity(4, 4).build();
            AsyncQueuePair keptAsync = null;
            try {
                reconnect(gone, goneSender);
                reconnect(kept, keptSender);
                keptAsync = engine.wrap(kept);
                holdTheEngine(engine, gate);
                leaveDroppedCompletions(gone, goneSender, byHand, wcs, mem, dropped);
                CompletableFuture<WorkCompletion> live = keptAsync.receiveAsync(mem, 4096, 64);
                keptSender.postSend(778, mem, 8192, 8);
                awaitByHand(byHand, wcs, 1); // the receive's completion is written before the send is acknowledged
                assertThat(engine.blockWhileWaiting(cq, live::isDone, TimeUnit.MILLISECONDS.toNanos(20)))
                        .as("the caller found the live receive behind 100 dropped completions, without sleeping")
                        .isTrue();
                assertThat(live.getNow(null).byteLength()).isEqualTo(8);
            } finally {
                gate.countDown();
                if (keptAsync != null) {
                    keptAsync.close();
                } else {
                    kept.close();
                }
                closeTheRest(keptSender, goneSender, gone, cq);
            }
        }
    }

    /** Holds the engine's thread in a task until {@code gate} opens: the CQs are then polled by nobody else. */
    private static void holdTheEngine(CompletionEngine engine, CountDownLatch gate) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        engine.execute(() -> {
            entered.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(entered.await(T, TimeUnit.SECONDS)).as("the engine thread is held").isTrue();
    }

    /**
     * {@code dropped} receive completions of {@code gone} in its CQ, then {@code gone} destroyed: they stay there,
     * dropped by the poll that meets them.
     */
    private static void leaveDroppedCompletions(QueuePair gone, QueuePair goneSender, CompletionQueue byHand,
            WorkCompletions wcs, MemoryRegion mem, int dropped) throws VerbsException {
        for (int i = 0; i < dropped; i++) {
            gone.postReceive(i, mem, 64L * (i % 64), 64);
        }
        for (int i = 0; i < dropped; i++) {
            goneSender.postSend(1000 + i, mem, 8192, 8);
        }
        awaitByHand(byHand, wcs, dropped);
        gone.close();
    }

    /** The dropped-batch tests' teardown after their live queue pair: the senders, the destroyed one, the CQ. */
    private static void closeTheRest(QueuePair keptSender, QueuePair goneSender, QueuePair gone, CompletionQueue cq) {
        keptSender.close();
        goneSender.close();
        if (!gone.isClosed()) {
            gone.close();
        }
        cq.close();
    }

    /** Polls a CQ of the test's own until {@code n} successful completions. */
    private static void awaitByHand(CompletionQueue cq, WorkCompletions wcs, int n) throws VerbsException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
        int seen = 0;
        while (seen < n) {
            assertThat(System.nanoTime()).as("completions polled by hand: %d of %d", seen, n).isLessThan(deadline);
            int k = cq.poll(wcs);
            for (int i = 0; i < k; i++) {
                assertThat(wcs.isSuccess(i)).as("completion %s", wcs.status(i)).isTrue();
            }
            seen += k;
        }
    }

    static QueuePair[] connectedPair(ProtectionDomain pd, CompletionQueue cq, int depth) throws VerbsException {
        QueuePair x = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(depth, depth).build();
        QueuePair y = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(depth, depth).build();
        reconnect(x, y);
        return new QueuePair[] {x, y};
    }

    static void reconnect(QueuePair x, QueuePair y) throws VerbsException {
        QpEndpoint ex = x.localEndpoint(300);
        QpEndpoint ey = y.localEndpoint(400);
        x.toInit();
        y.toInit();
        x.toRtr(RtrAttributes.builder(ey).build());
        y.toRtr(RtrAttributes.builder(ex).build());
        x.toRts(RtsAttributes.builder(300).rnrRetry(7).build());
        y.toRts(RtsAttributes.builder(400).rnrRetry(7).build());
    }
}
