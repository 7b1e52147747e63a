package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.ChildJvm;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One virtual thread per connection, the blocking idiom Java 21+ users write: a ping-pong between two virtual threads
 * on a scheduler of one carrier (a child JVM with {@code jdk.virtualThreadScheduler.parallelism=1} and
 * {@code maxPoolSize=1}: what any number of waiting connections beyond the carriers does to a bigger scheduler).
 * Before, a waiting receiver held its carrier: in event mode asleep in {@code poll(2)} on its connection's channel
 * (a native call, in 50 ms slices, no yield between them), with busy polling spinning; the other virtual thread, the
 * one that would send what it waited for, never ran, and the receive timed out. Now a virtual thread parks while the
 * engine's thread dispatches, in either mode (with busy polling, yielding after each empty look stalled one run of
 * two for the receive's 30 s: given up).
 */
@Tag("device")
class VirtualThreadWaitersDeviceTest {
    static final int ROUND_TRIPS = 100;
    /** A receive's timeout in the child: a stuck ping-pong fails in this, not at the child's deadline. */
    static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(30);

    @ParameterizedTest
    @ValueSource(strings = {"event", "busy"})
    void twoVirtualThreadsOnOneCarrierPingPong(String mode, @TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, List.of("-Djdk.virtualThreadScheduler.parallelism=1",
                "-Djdk.virtualThreadScheduler.maxPoolSize=1"), 600, Child.class, mode);
        System.out.print(child.output());
        child.survived();
        assertThat(child.output()).contains("virtual threads, " + mode + ": " + ROUND_TRIPS + " round trips");
    }

    /** The child: a server and a client connection, each driven by a virtual thread, {@link #ROUND_TRIPS} round trips. */
    public static final class Child {
        private Child() {
        }

        /**
         * Runs the ping-pong.
         *
         * @param args {@code event} or {@code busy}
         * @throws Exception if it fails (exit status 1)
         */
        public static void main(String[] args) throws Exception {
            boolean busy = args[0].equals("busy");
            RdmaOptions o = RdmaOptions.builder().busyPoll(busy).timeout(RECEIVE_TIMEOUT).build();
            InetSocketAddress address = RdmaConnectionDeviceTest.address();
            try (RdmaServer server = RdmaServer.listen(address, o)) {
                CompletableFuture<RdmaConnection> accepted = server.acceptAsync();
                try (RdmaConnection c = RdmaClient.connect(server.localAddress(), o);
                        RdmaConnection s = accepted.get(60, TimeUnit.SECONDS)) {
                    long start = System.nanoTime();
                    CompletableFuture<Integer> echoes = new CompletableFuture<>();
                    CompletableFuture<Integer> replies = new CompletableFuture<>();
                    Thread echo = Thread.ofVirtual().name("echo").start(() -> run(echoes, () -> {
                        for (int i = 0; i < ROUND_TRIPS; i++) {
                            try (Message m = s.receive()) {
                                s.send(m.data());
                            }
                        }
                    }));
                    Thread ping = Thread.ofVirtual().name("ping").start(() -> run(replies, () -> {
                        for (int i = 0; i < ROUND_TRIPS; i++) {
                            c.send(new byte[] {(byte) i});
                            try (Message m = c.receive()) {
                                if (m.bytes()[0] != (byte) i) {
                                    throw new IOException("reply " + i + " carried " + m.bytes()[0]);
                                }
                            }
                        }
                    }));
                    int n;
                    try {
                        n = replies.get(300, TimeUnit.SECONDS);
                        echoes.get(60, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                        dumpThreads(); // where each virtual thread is, for the failure's report
                        throw e;
                    }
                    ping.join();
                    echo.join();
                    System.out.printf("virtual threads, %s: %d round trips in %d ms%n", args[0], n,
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
            }
        }

        private static void dumpThreads() throws IOException {
            java.nio.file.Path file = java.nio.file.Path.of("threads-" + ProcessHandle.current().pid() + ".txt");
            java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .dumpThreads(file.toAbsolutePath().toString(),
                            com.sun.management.HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
            System.out.println(java.nio.file.Files.readString(file));
        }

        private interface Body {
            void run() throws Exception;
        }

        private static void run(CompletableFuture<Integer> outcome, Body body) {
            try {
                body.run();
                outcome.complete(ROUND_TRIPS);
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        }
    }
}
