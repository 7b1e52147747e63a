package dev.rdma4j.engine;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * 40,000 single-message ping-pongs in event mode from four virtual threads (100,000 in the long soak,
 * {@code RDMA4J_SOAK=1}: {@code scripts/test --soak}): every one must complete (a lost wake-up would stall a future
 * forever; each wait is bounded, generously, so a stall fails). 40 to 65 s in the guest at 100,000, most of the device
 * suite's time after the leak check and the examples.
 */
@Tag("device")
class LostWakeupStressDeviceTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = "1".equals(System.getenv("RDMA4J_SOAK")) ? 25_000 : 10_000;

    @Test
    void pingPongsFromFourVirtualThreadsNeverStall() throws Exception {
        try (EnginePair p = new EnginePair(PollingMode.EVENT, 16)) {
            ConcurrentHashMap<Long, Boolean> pingsSeen = new ConcurrentHashMap<>();
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int id = t;
                workers.add(Thread.ofVirtual().name("pinger-" + t).start(() -> {
                    long slot = id * 64L;
                    try {
                        for (int i = 0; i < PER_THREAD; i++) {
                            CompletableFuture<WorkCompletion> ping = p.b.receiveAsync(p.memB, slot, 8);
                            CompletableFuture<WorkCompletion> pong = p.a.receiveAsync(p.memA, 4096 + slot, 8);
                            p.memA.segment().set(JAVA_LONG, 8192 + slot, ((long) id << 32) | i);
                            p.a.blocking().send(p.memA, 8192 + slot, 8);
                            ping.get(120, TimeUnit.SECONDS);
                            long got = p.memB.segment().get(JAVA_LONG, slot); // whose ping landed here
                            if (pingsSeen.put(got, Boolean.TRUE) != null) {
                                throw new AssertionError("ping " + Long.toHexString(got) + " received twice");
                            }
                            p.b.blocking().send(p.memB, slot, 8);
                            pong.get(120, TimeUnit.SECONDS);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread w : workers) {
                assertThat(w.join(java.time.Duration.ofMinutes(30))).as("ping-pong thread finished").isTrue();
            }
            assertThat(errors).isEmpty();
            assertThat(pingsSeen).hasSize(THREADS * PER_THREAD);
        }
    }
}
