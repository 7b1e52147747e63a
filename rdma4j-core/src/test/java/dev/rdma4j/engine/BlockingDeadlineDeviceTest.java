package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 6: a blocking send to a peer with no receive posted parked forever (RNR retry 7). The
 * blocking view now takes a deadline, says whether the request was posted, and leaves it posted (pinned)
 * until the device completes it.
 */
@Tag("device")
class BlockingDeadlineDeviceTest {
    private static final long T = 120;

    @Test
    void aBlockingSendToAPeerWithNoReceiveGivesUpAtItsDeadlineAndStaysPosted() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> p.a.blocking(Duration.ofSeconds(2)).send(p.memA, 0, 8))
                    .isInstanceOfSatisfying(WorkRequestTimeoutException.class, e -> {
                        assertThat(e.posted()).isTrue();
                        assertThat(e.timeout()).isEqualTo(Duration.ofSeconds(2));
                        assertThat(e).hasMessageContaining("send did not complete within PT2S")
                                .hasMessageContaining("stays posted");
                    });
            assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isBetween(1L, 60L);
            assertThat(p.a.sendRoom()).as("the request still holds its room").isEqualTo(capacity - 1);
            assertThatThrownBy(p.memA::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("posted work request");
            // the receive arrives late: the abandoned send completes on the device and gives its room back
            WorkCompletion r = p.b.blocking(Duration.ofSeconds(T)).receive(p.memB, 0, 64);
            assertThat(r.byteLength()).isEqualTo(8);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (p.a.sendRoom() != capacity && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
        }
    }

    @Test
    void waitingForQueueRoomGivesUpAtTheDeadlineWithoutPosting() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 4)) {
            int capacity = p.a.queuePair().capabilities().maxSendWr();
            List<CompletableFuture<WorkCompletion>> stuck = new ArrayList<>();
            for (int i = 0; i < capacity; i++) {
                stuck.add(p.a.sendAsync(p.memA, 0, 8)); // no receive on b: RNR, retried forever
            }
            assertThat(p.a.sendRoom()).isZero();
            assertThatThrownBy(() -> p.a.blocking(Duration.ofMillis(500)).write(p.memA, 0, 8, p.memB.remote(), 0))
                    .isInstanceOfSatisfying(WorkRequestTimeoutException.class, e -> {
                        assertThat(e.posted()).isFalse();
                        assertThat(e).hasMessageContaining("RDMA write found no queue room within PT0.5S");
                    });
            for (int i = 0; i < capacity; i++) {
                p.b.receiveAsync(p.memB, 64L * i, 64);
            }
            CompletableFuture.allOf(stuck.toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
            assertThat(p.a.sendRoom()).isEqualTo(capacity);
        }
    }

    @Test
    void aBlockedCallerCanBeInterruptedAndBadTimeoutsAreRefused() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 8)) {
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread caller = Thread.ofVirtual().start(() -> {
                try {
                    p.a.blocking().send(p.memA, 0, 8); // no deadline, no receive on b
                    outcome.set(new AssertionError("completed"));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            long parked = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (caller.getState() != Thread.State.WAITING && System.nanoTime() < parked) {
                Thread.onSpinWait(); // until it waits for the completion
            }
            assertThat(caller.getState()).isEqualTo(Thread.State.WAITING);
            caller.interrupt();
            caller.join(TimeUnit.SECONDS.toMillis(T));
            assertThat(caller.isAlive()).isFalse();
            assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
            assertThatThrownBy(() -> p.a.blocking(Duration.ofSeconds(-1)).send(p.memA, 0, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
            assertThatThrownBy(() -> p.a.blocking(null).send(p.memA, 0, 8)).isInstanceOf(NullPointerException.class);
            p.b.blocking(Duration.ofSeconds(T)).receive(p.memB, 0, 64); // the interrupted send still completes
        }
    }
}
