package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 7: write + send was two posts and two futures, where C uses one chained
 * {@code ibv_post_send}. {@code AsyncQueuePair.postAsync(SendBatch)} posts a chain under one future.
 */
@Tag("device")
class AsyncChainDeviceTest {
    private static final long T = 120;

    @Test
    void anUnsignaledWriteAndASignaledSendGoAsOneChainUnderOneFuture() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8); SendBatch chain = new SendBatch(2, 1)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            p.memA.segment().set(ValueLayout.JAVA_LONG, 0, 0x1234_5678_9abcL);
            CompletableFuture<WorkCompletion> received = p.b.receiveAsync(p.memB, 1024, 64);
            chain.write(1, p.memA, 0, 8, p.memB.remote(), 512).unsignaled().send(2, p.memA, 0, 4);
            WorkCompletion last = p.a.postAsync(chain).get(T, TimeUnit.SECONDS);
            assertThat(last.opcode()).isEqualTo(WcOpcode.SEND);
            assertThat(last.wrId()).as("no internal token leaks out (issue 10, item 10)").isZero();
            WorkCompletion got = received.get(T, TimeUnit.SECONDS);
            assertThat(got.byteLength()).isEqualTo(4);
            assertThat(got.wrId()).isZero();
            // the write came first on the same QP: it is in place when the send is received
            assertThat(p.memB.segment().get(ValueLayout.JAVA_LONG, 512)).isEqualTo(0x1234_5678_9abcL);
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
            assertThat(chain.count()).as("the batch is unchanged, reusable").isEqualTo(2);
            CompletableFuture<WorkCompletion> again = p.b.receiveAsync(p.memB, 1024, 64);
            assertThat(p.a.blocking(Duration.ofSeconds(T)).post(chain).opcode()).isEqualTo(WcOpcode.SEND);
            again.get(T, TimeUnit.SECONDS);
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
        }
    }

    @Test
    void aFailedEarlierRequestFailsTheChainAndTheRoomComesBack() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8); SendBatch chain = new SendBatch(2, 1)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            RemoteRegion wrongKey = new RemoteRegion(p.memB.address(), p.memB.length(), p.memB.rkey() + 1);
            chain.write(1, p.memA, 0, 8, wrongKey, 0).unsignaled().send(2, p.memA, 0, 4);
            CompletableFuture<WorkCompletion> f = p.a.postAsync(chain);
            assertThatThrownBy(() -> f.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOfSatisfying(WorkRequestException.class,
                            e -> assertThat(e.status()).isEqualTo(WcStatus.REM_ACCESS_ERR))
                    .hasMessageContaining("request 0");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (p.a.sendRoom() != capacity && System.nanoTime() < deadline) {
                Thread.sleep(5); // the send after it is flushed, which ends the chain
            }
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
        }
    }

    /**
     * A chain whose second request rdma4j refuses before the post (an invalidate of a window never bound) posts
     * nothing: the failed index is 1, and the engine kept one unit of send room for a completion of request 0 that
     * never comes (until the queue pair's reset or close) before it asked how many were posted.
     */
    @Test
    void aChainRefusedBeforeThePostKeepsNoSendRoom() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8); SendBatch chain = new SendBatch(2, 1);
                dev.rdma4j.MemoryWindow window = p.pd.allocateWindow(dev.rdma4j.MemoryWindow.Type.TYPE_2)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            chain.send(1, p.memA, 0, 4).localInvalidate(2, window);
            for (int i = 0; i < 3; i++) {
                CompletableFuture<WorkCompletion> f = p.a.postAsync(chain);
                assertThatThrownBy(() -> f.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(dev.rdma4j.VerbsException.class).hasMessageContaining("not bound");
                assertThat(chain.failedIndex()).isEqualTo(1);
                assertThat(p.a.sendRoom()).as("after refusal %d", i + 1).isEqualTo(capacity);
            }
        }
    }

    @Test
    void chainsThatNothingWouldCompleteAreRefused() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 4); SendBatch chain = new SendBatch(256, 1)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            assertThat(capacity).isLessThan(256);
            assertThatThrownBy(() -> p.a.postAsync(chain)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            chain.send(1, p.memA, 0, 4).unsignaled();
            assertThatThrownBy(() -> p.a.postAsync(chain)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be signaled");
            chain.clear();
            for (int i = 0; i <= capacity; i++) {
                chain.send(i, p.memA, 0, 4);
            }
            assertThatThrownBy(() -> p.a.postAsync(chain)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("longer than the send queue");
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
        }
    }

    /** Inline sends and writes through the engine: from heap memory, nothing registered or pinned. */
    @Test
    void inlineSendAndWriteTakeAnyMemory() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            dev.rdma4j.QueuePair qa = dev.rdma4j.QueuePair.builder(p.pd, dev.rdma4j.QpType.RC).completionQueue(p.cqA)
                    .capacity(8, 8).maxInlineData(64).build();
            dev.rdma4j.QueuePair qb = dev.rdma4j.QueuePair.builder(p.pd, dev.rdma4j.QpType.RC).completionQueue(p.cqB)
                    .capacity(8, 8).build();
            CompletionRoutingDeviceTest.reconnect(qa, qb);
            AsyncQueuePair a = p.engine.wrap(qa);
            AsyncQueuePair b = p.engine.wrap(qb);
            try {
                int max = qa.capabilities().maxInlineData();
                assertThat(max).isGreaterThanOrEqualTo(64);
                java.lang.foreign.MemorySegment heap = java.lang.foreign.MemorySegment.ofArray(
                        "inline from the heap".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                CompletableFuture<WorkCompletion> r = b.receiveAsync(p.memB, 0, 64);
                a.sendInlineAsync(heap).get(T, TimeUnit.SECONDS);
                assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo((int) heap.byteSize());
                assertThat(p.memB.segment().asSlice(0, heap.byteSize()).mismatch(heap)).isEqualTo(-1);
                a.writeInlineAsync(heap, p.memB.remote(), 256).get(T, TimeUnit.SECONDS);
                assertThat(p.memB.segment().asSlice(256, heap.byteSize()).mismatch(heap)).isEqualTo(-1);
                assertThatThrownBy(() -> a.sendInlineAsync(java.lang.foreign.MemorySegment.ofArray(new byte[max + 1])))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inline");
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
