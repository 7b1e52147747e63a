package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QueuePair;
import dev.rdma4j.TestDevice;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link AsyncQueuePair#sendTagged} and {@link AsyncQueuePair#receiveTagged} on the device: each request's
 * completion reaches the wrapper's {@link RequestHandler} once, with the caller's tag and the device's status and
 * length; a full queue is a {@code false} return; a wrapper without a handler refuses; closing the queue pair tells
 * the handler of every request still posted, by tag; a handler that throws is counted and the engine goes on.
 */
@Tag("device")
class TaggedRequestsDeviceTest {
    private static final long T = 60;

    /** What the handler heard: tag, status (null for a failure without completion), byte length. */
    private record Heard(long tag, WcStatus status, int length, Thread thread) {
    }

    private static final class Recorder implements RequestHandler {
        final List<Heard> heard = new CopyOnWriteArrayList<>();
        volatile boolean throwOnce;

        @Override
        public void onCompletion(long tag, WorkCompletions batch, int index) {
            heard.add(new Heard(tag, batch.status(index), batch.byteLength(index), Thread.currentThread()));
            if (throwOnce) {
                throwOnce = false;
                throw new IllegalStateException("a handler that fails once");
            }
        }

        @Override
        public void onFailure(long tag, WorkRequestException reason) {
            heard.add(new Heard(tag, null, -1, Thread.currentThread()));
        }

        void await(int n) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (heard.size() < n) {
                assertThat(System.nanoTime()).as("heard %s, waiting for %d", heard, n).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void taggedSendsAndReceivesReachTheHandlerWithTheirTags() throws Exception {
        Recorder rx = new Recorder();
        Recorder tx = new Recorder();
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-tagged").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             MemoryRegion mem = pd.allocate(1 << 16, EnginePair.ALL)) {
            CompletionQueue cq = engine.createCompletionQueue(ctx, 64);
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 8);
            AsyncQueuePair sender = engine.wrap(qp[0], tx);
            AsyncQueuePair receiver = engine.wrap(qp[1], rx);
            try {
                int r = receiver.receiveRoom(); // what the device granted (at least 8)
                assertThat(r).isBetween(8, 64);
                for (int i = 0; i < r; i++) {
                    assertThat(receiver.receiveTagged(mem, 8192 + 512L * i, 512, 100 + i)).isTrue();
                }
                assertThat(receiver.receiveTagged(mem, 0, 64, 999)).as("a receive on a full queue").isFalse();
                assertThat(receiver.receiveRoom()).isZero();
                for (int i = 0; i < 5; i++) {
                    mem.segment().set(ValueLayout.JAVA_BYTE, 64L * i, (byte) (40 + i));
                    assertThat(sender.sendTagged(mem, 64L * i, 10 + i, (1L << 40) + i)).isTrue();
                }
                tx.await(5);
                rx.await(5);
                assertThat(tx.heard).extracting(Heard::tag).containsExactly(
                        (1L << 40), (1L << 40) + 1, (1L << 40) + 2, (1L << 40) + 3, (1L << 40) + 4);
                assertThat(tx.heard).extracting(Heard::status).containsOnly(WcStatus.SUCCESS);
                assertThat(rx.heard).extracting(Heard::tag).containsExactly(100L, 101L, 102L, 103L, 104L);
                assertThat(rx.heard).extracting(Heard::length).containsExactly(10, 11, 12, 13, 14);
                assertThat(mem.segment().get(ValueLayout.JAVA_BYTE, 8192 + 512L * 3)).isEqualTo((byte) 43);
                assertThat(receiver.receiveRoom()).as("room comes back with each completion").isEqualTo(5);
                int left = r - 7;

                // a handler that throws is counted; the engine goes on with the next completion
                long failures = engine.callbackFailures();
                tx.throwOnce = true;
                assertThat(sender.sendTagged(mem, 0, 1, 7)).isTrue();
                assertThat(sender.sendTagged(mem, 0, 1, 8)).isTrue();
                tx.await(7);
                rx.await(7);
                assertThat(tx.heard.subList(5, 7)).extracting(Heard::tag).containsExactly(7L, 8L);
                assertThat(engine.callbackFailures()).isEqualTo(failures + 1);

                // closing the queue pair tells the handler of each receive still posted, once, by its tag
                receiver.close();
                rx.await(7 + left);
                assertThat(rx.heard.subList(7, 7 + left)).extracting(Heard::status).containsOnlyNulls();
                assertThat(rx.heard.subList(7, 7 + left)).extracting(Heard::tag)
                        .containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.range(107, 100 + r).boxed()
                                .toList());
                assertThatThrownBy(() -> receiver.receiveTagged(mem, 0, 64, 1))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            } finally {
                sender.close();
                receiver.close();
                cq.close();
            }
        }
    }

    @Test
    void aWrapperWithoutAHandlerRefusesTaggedRequests() throws Exception {
        try (Context ctx = TestDevice.device().open();
             CompletionEngine engine = CompletionEngine.builder().name("test-engine-untagged").build();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             MemoryRegion mem = pd.allocate(4096, EnginePair.ALL)) {
            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
            QueuePair[] qp = CompletionRoutingDeviceTest.connectedPair(pd, cq, 4);
            try (AsyncQueuePair a = engine.wrap(qp[0]); AsyncQueuePair b = engine.wrap(qp[1])) {
                assertThatThrownBy(() -> a.sendTagged(mem, 0, 8, 1)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("without a RequestHandler");
                assertThat(a.sendRoom()).as("nothing taken").isEqualTo(qp[0].capabilities().maxSendWr());
                assertThatThrownBy(() -> b.receiveTagged(mem, 0, 8, 1)).isInstanceOf(IllegalStateException.class);
            } finally {
                cq.close();
            }
        }
    }
}
