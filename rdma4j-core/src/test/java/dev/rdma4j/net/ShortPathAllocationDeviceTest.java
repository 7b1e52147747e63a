package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the short path's README idiom allocates once warm: a ping-pong of 64 B with blocking {@code send} and
 * {@code receive}, busy-polled and in event mode, counted by the JVM's per-thread counters summed over every
 * thread (the caller's, the echoing server's, both engines'). A round trip may make what it hands out (the two
 * {@link Message}s and their views of the buffers); the machinery around them (futures, completion objects,
 * callbacks) is made nothing per message. Before the connection's sends and receives were tagged requests of the
 * engine's it made about 2.3 KB a round trip, which kept the guest's young collector busy in every measured window.
 */
@Tag("device")
class ShortPathAllocationDeviceTest {
    private static final long T = 120;
    /** Two messages and their read-only views, with room for the counters' noise (a deoptimisation, a lock's node). */
    private static final long MOST_PER_ROUND_TRIP = 400;

    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void aBlockingPingPongAllocatesOnlyTheMessagesItHandsOut(boolean busyPoll) throws Exception {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        RdmaOptions o = RdmaOptions.builder().timeout(Duration.ofSeconds(60)).busyPoll(busyPoll).messageSize(64)
                .build();
        try (RdmaServer server = RdmaServer.listen(RdmaConnectionDeviceTest.address(), o); Arena arena = Arena.ofConfined()) {
            CompletableFuture<RdmaConnection> accepted = server.acceptAsync();
            try (RdmaConnection c = RdmaClient.connect(server.localAddress(), o);
                 RdmaConnection s = accepted.get(T, TimeUnit.SECONDS)) {
                AtomicReference<Throwable> echoFailed = new AtomicReference<>();
                Thread echo = Thread.ofPlatform().name("echo").start(() -> {
                    try {
                        for (;;) {
                            try (Message m = s.receive()) {
                                s.send(m.data());
                            }
                        }
                    } catch (java.io.EOFException | java.nio.channels.AsynchronousCloseException end) {
                        // the client closed, or the test is over
                    } catch (IOException | InterruptedException | RuntimeException e) {
                        echoFailed.set(e);
                    }
                });
                MemorySegment ping = arena.allocate(64);
                int n = 1_000;
                roundTrips(c, ping, 2_000); // class loading, linking, JIT
                dev.rdma4j.testing.JitQuiet.untilQuiet(() -> roundTrips(c, ping, n));
                long before = threads.getTotalThreadAllocatedBytes();
                roundTrips(c, ping, n);
                long allocated = threads.getTotalThreadAllocatedBytes() - before;
                assertThat(echoFailed.get()).isNull();
                System.out.printf("short path, busyPoll=%s: %d round trips, %d B (%d B a round trip)%n", busyPoll, n,
                        allocated, allocated / n);
                assertThat(allocated).as("bytes allocated by every thread over %d round trips", n)
                        .isGreaterThan(0).isLessThan(n * MOST_PER_ROUND_TRIP);
                RdmaConnection client = c;
                client.close(); // the echo's receive ends with EOF
                echo.join(TimeUnit.SECONDS.toMillis(T));
                assertThat(echo.isAlive()).as("the echo thread ends with the client's close").isFalse();
                assertThat(echoFailed.get()).isNull();
            }
        }
    }

    private static void roundTrips(RdmaConnection c, MemorySegment ping, int n) {
        try {
            for (int i = 0; i < n; i++) {
                c.send(ping);
                try (Message m = c.receive()) {
                    if (m.length() != 64) {
                        throw new AssertionError("echo of " + m.length() + " bytes");
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
