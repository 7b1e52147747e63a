package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 3: the synchronous API had no blocking wait (nothing played {@code ibv_get_cq_event}), so
 * a user spun on {@code poll}. {@code CompletionQueue.await} arms, waits on the channel and polls.
 */
@Tag("device")
class SynchronousAwaitDeviceTest {

    @Test
    void awaitSleepsUntilACompletionArrivesOrTheTimeout() throws Exception {
        try (Context ctx = TestDevice.device().open();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionChannel channel = ctx.createCompletionChannel();
             CompletionQueue waited = ctx.createCompletionQueue(16, channel, 0);
             CompletionQueue plain = ctx.createCompletionQueue(16);
             WorkCompletions wcs = new WorkCompletions(4)) {
            QueuePair receiver = QueuePair.builder(pd, QpType.RC).completionQueue(waited).build();
            QueuePair sender = QueuePair.builder(pd, QpType.RC).completionQueue(plain).build();
            try (MemoryRegion mem = pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
                QpEndpoint er = receiver.localEndpoint(1);
                QpEndpoint es = sender.localEndpoint(2);
                receiver.toInit();
                sender.toInit();
                receiver.toRtr(RtrAttributes.builder(es).build());
                sender.toRtr(RtrAttributes.builder(er).build());
                receiver.toRts(RtsAttributes.builder(1).build());
                sender.toRts(RtsAttributes.builder(2).build());

                long t0 = System.nanoTime();
                assertThat(waited.await(wcs, Duration.ofMillis(300))).as("nothing to complete").isZero();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isGreaterThanOrEqualTo(300);

                receiver.postReceive(7, mem, 0, 64);
                Thread late = Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(500);
                        sender.postSend(8, mem, 1024, 16);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                int n = waited.await(wcs, Duration.ofSeconds(60));
                late.join();
                assertThat(n).isEqualTo(1);
                assertThat(wcs.wrId(0)).isEqualTo(7);
                assertThat(wcs.byteLength(0)).isEqualTo(16);

                AtomicReference<Throwable> outcome = new AtomicReference<>();
                Thread waiter = Thread.ofPlatform().start(() -> {
                    try (WorkCompletions own = new WorkCompletions(1)) {
                        waited.await(own, Duration.ofSeconds(60));
                        outcome.set(new AssertionError("returned"));
                    } catch (Throwable t) {
                        outcome.set(t);
                    }
                });
                Thread.sleep(200);
                waiter.interrupt();
                waiter.join(TimeUnit.SECONDS.toMillis(30));
                assertThat(waiter.isAlive()).isFalse();
                assertThat(outcome.get()).isInstanceOf(InterruptedException.class);

                assertThatThrownBy(() -> plain.await(wcs, Duration.ofSeconds(1)))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no completion channel");
                assertThatThrownBy(() -> waited.await(wcs, Duration.ofSeconds(-1)))
                        .isInstanceOf(IllegalArgumentException.class);
                try (dev.rdma4j.engine.CompletionEngine engine = dev.rdma4j.engine.CompletionEngine.builder()
                        .name("await-refuser").build()) {
                    java.util.concurrent.CompletableFuture<Throwable> onEngine = new java.util.concurrent.CompletableFuture<>();
                    engine.execute(() -> {
                        try (WorkCompletions own = new WorkCompletions(1)) {
                            waited.await(own, Duration.ofSeconds(1));
                            onEngine.complete(null);
                        } catch (Throwable t) {
                            onEngine.complete(t);
                        }
                    });
                    assertThat(onEngine.get(60, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("completion engine await-refuser");
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (plain.poll(wcs) == 0) { // the send's completion, so its region is unpinned
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(1);
                }
            } finally {
                receiver.close();
                sender.close();
            }
        }
    }
}
