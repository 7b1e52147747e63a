package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.WorkCompletion;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Misuse of the engine that once hung or leaked (issue 9). */
@Tag("device")
class EngineMisuseDeviceTest {
    private static final long T = 120;

    /**
     * A blocking call (the blocking view) from a continuation, which runs on the engine thread, used to wait for a
     * completion only that thread could deliver: the engine deadlocked. Now it fails fast, naming itself.
     */
    @Test
    void aBlockingCallOnTheEngineThreadFailsFastInsteadOfDeadlocking() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 16)) {
            // the receive completes only after the send below, so its continuation runs on the engine thread
            CompletableFuture<WorkCompletion> received = p.b.receiveAsync(p.memB, 0, 64);
            CompletableFuture<Object> chained = received.thenApply(c -> {
                assertThat(p.engine.inEngineThread()).isTrue();
                try {
                    return p.b.blocking().write(p.memB, 0, 8, p.memA.remote(), 64);
                } catch (Exception e) {
                    throw new IllegalStateException("unexpected " + e, e);
                }
            });
            p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS);
            assertThatThrownBy(() -> chained.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("blocks").hasMessageContaining("engine thread")
                    .hasMessageContaining("RDMA write");
            assertThat(p.engine.inEngineThread()).isFalse();
            // the engine still works
            p.a.writeAsync(p.memA, 0, 8, p.memB.remote(), 128).get(T, TimeUnit.SECONDS);
        }
    }

    /** A builder refusal used to come after epoll and the eventfd were created, leaking both. */
    @Test
    void aFailedBuildLeaksNoFileDescriptor() throws Exception {
        long before = dev.rdma4j.OpenFds.count();
        for (int i = 0; i < 200; i++) {
            assertThatThrownBy(() -> CompletionEngine.builder().name(null).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        }
        assertThat(dev.rdma4j.OpenFds.count()).isLessThanOrEqualTo(before + 2); // slack for the JVM's own
    }


    /**
     * Queue room used to be released when the future handed to the caller completed, so a caller's
     * {@code cancel()} freed room while the request was still in the device's queue, and the next post
     * overran the queue. Now the caller gets a copy: cancelling it leaves rdma4j's accounting alone, and the
     * room comes back when the device completes the request.
     */
    @Test
    void cancellingAFutureDoesNotFreeQueueRoomTheDeviceStillUses() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            int capacity = p.b.queuePair().capabilities().maxRecvWr();
            assertThat(p.b.receiveRoom()).isEqualTo(capacity);
            java.util.List<CompletableFuture<WorkCompletion>> receives = new java.util.ArrayList<>();
            for (int i = 0; i < capacity; i++) {
                receives.add(p.b.receiveAsync(p.memB, i * 64L, 64));
            }
            receives.forEach(f -> f.cancel(false));
            assertThat(p.b.receiveRoom()).as("room after cancelling every receive").isZero();
            assertThatThrownBy(() -> p.b.receiveAsync(p.memB, 0, 64).get(T, TimeUnit.SECONDS))
                    .hasMessageContaining("queue full"); // refused by rdma4j, not overrun at the device
            for (int i = 0; i < capacity; i++) {
                p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS); // consumes the cancelled receives
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (p.b.receiveRoom() < capacity) {
                assertThat(System.nanoTime()).as("room back to %d, now %d", capacity, p.b.receiveRoom())
                        .isLessThan(deadline);
                Thread.onSpinWait();
            }
            assertThat(p.b.receiveAsync(p.memB, 0, 64).isDone()).isFalse(); // posts again
        }
    }

    /**
     * An engine's completion channel read by the application: the event of the engine's arming was taken, the engine
     * believed the queue still armed (it arms a queue again only once it has read that event), and the queue's
     * completions waited for good. Reading the events of an engine's channel off its thread is refused, as polling
     * its queues is; both the shared channel and a queue's own are the engine's, and the queues go on working.
     */
    @Test
    void readingTheEventsOfAnEnginesChannelElsewhereIsRefused() throws Exception {
        for (boolean own : new boolean[] {false, true}) {
            try (EnginePair p = new EnginePair(PollingMode.EVENT, 8, 7, own)) {
                assertThatThrownBy(() -> p.cqB.channel().nextEvent()).as("own channel: %s", own)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("steal");
                assertThatThrownBy(() -> p.cqB.channel().awaitEvent(java.time.Duration.ofMillis(1)))
                        .as("own channel: %s", own)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("steal");
                CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 64);
                p.a.sendAsync(p.memA, 0, 8).get(T, TimeUnit.SECONDS);
                assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(8);
            }
        }
    }

    /** After the engine closed, posts used to be accepted and their futures never completed. */
    @Test
    void afterTheEngineClosedPostsFailAtOnceAndPendingOnesAreFailed() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            CompletableFuture<WorkCompletion> pendingReceive = p.b.receiveAsync(p.memB, 0, 64);
            p.engine.close();
            assertThat(p.engine.isClosed()).isTrue();
            assertThatThrownBy(() -> pendingReceive.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            CompletableFuture<WorkCompletion> late = p.a.sendAsync(p.memA, 0, 8);
            assertThat(late).isCompletedExceptionally();
            assertThatThrownBy(late::join).cause().isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("engine").hasMessageContaining("closed");
            assertThatThrownBy(() -> p.a.blocking().send(p.memA, 0, 8)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }
}
