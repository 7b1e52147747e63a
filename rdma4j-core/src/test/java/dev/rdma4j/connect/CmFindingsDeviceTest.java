package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The misuse fuzzer's findings of issue 29 on rdma_cm: a huge connect timeout threw {@code ArithmeticException}
 * after the rdma_cm id was made, which then kept its channel open for good (2); {@code accept} and {@code reject}
 * sent private data longer than the CM carries, truncated (3).
 */
@Tag("device")
class CmFindingsDeviceTest {
    private static final long T = CmPair.T;

    @Test
    void aHugeConnectTimeoutMeansNoDeadlineAndLeaksNoId() throws Exception {
        try (CmPair p = new CmPair()) {
            for (Duration huge : new Duration[] {Duration.ofSeconds(Long.MAX_VALUE),
                Duration.ofSeconds(Long.MAX_VALUE, 999_999_999), Duration.ofNanos(Long.MAX_VALUE)}) {
                CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
                CompletableFuture<CmConnection> client = CmConnection.connectAsync(p.channel, null, p.address, p.setup(),
                        new byte[0], huge, huge);
                try (CmConnection server = request.get(T, TimeUnit.SECONDS).acceptAsync(p.setup(), new byte[0])
                        .get(T, TimeUnit.SECONDS); CmConnection c = client.get(T, TimeUnit.SECONDS)) {
                    assertThat(c.queuePair().state()).isEqualTo(dev.rdma4j.QpState.RTS);
                    assertThat(server.queuePair().state()).isEqualTo(dev.rdma4j.QpState.RTS);
                }
            }
            // a negative one is refused before anything is made
            CompletableFuture<CmConnection> negative = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                    new byte[0], Duration.ofSeconds(-1));
            assertThatThrownBy(() -> negative.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(IllegalArgumentException.class);
        } // CmPair.close() closes the channel: refused if an id were left
    }

    @Test
    void acceptRefusesMorePrivateDataThanTheCmCarries() throws Exception {
        try (CmPair p = new CmPair()) {
            CompletableFuture<CmConnectionRequest> next = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> client = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                    new byte[0], Duration.ofSeconds(T));
            CmConnectionRequest request = next.get(T, TimeUnit.SECONDS);
            byte[] tooLong = new byte[PrivateData.ACCEPT + 1];
            assertThatThrownBy(() -> request.acceptAsync(p.setup(), tooLong).get(T, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("rdma_cm private data is at most 196 bytes on accept: 197");
            assertThatThrownBy(() -> request.reject(new byte[300])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("rdma_cm private data is at most 148 bytes on reject: 300");
            // the request is still unanswered: the longest data that fits arrives whole
            byte[] most = new byte[PrivateData.ACCEPT];
            Arrays.fill(most, (byte) 0x5a);
            try (CmConnection server = request.acceptAsync(p.setup(), most).get(T, TimeUnit.SECONDS);
                    CmConnection c = client.get(T, TimeUnit.SECONDS)) {
                assertThat(c.peerPrivateData()).isEqualTo(most);
                assertThat(server.queuePair().state()).isEqualTo(dev.rdma4j.QpState.RTS);
            }
        }
    }

    @Test
    void rejectRefusesMorePrivateDataThanTheCmCarries() throws Exception {
        try (CmPair p = new CmPair()) {
            CompletableFuture<CmConnectionRequest> next = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> client = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                    new byte[0], Duration.ofSeconds(T));
            CmConnectionRequest request = next.get(T, TimeUnit.SECONDS);
            assertThatThrownBy(() -> request.reject(new byte[PrivateData.REJECT + 1]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("rdma_cm private data is at most 148 bytes on reject: 149");
            byte[] most = new byte[PrivateData.REJECT];
            Arrays.fill(most, (byte) 0x33);
            request.reject(most);
            assertThatThrownBy(() -> client.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOfSatisfying(CmException.class,
                            e -> assertThat(e.privateData()).isEqualTo(most));
        }
    }

    /**
     * A connection's close racing a direct close of its queue pair on another thread: the queue pair's close marks it
     * closed before destroying it, so the connection's close found it closed, returned at once and destroyed the id,
     * and the other thread's {@code rdma_destroy_qp} was then refused ("after close(): its rdma_cm id is destroyed"),
     * leaving the queue pair in the kernel and its CQ busy (found for {@code CmDatagram} by its misuse fuzzer).
     */
    @Test
    void aConnectionsCloseRacingItsQueuePairsCloseDestroysTheQueuePair() throws Exception {
        try (CmPair pair = new CmPair()) {
            for (int round = 0; round < 40; round++) {
                CmConnection[] cs = pair.connect();
                dev.rdma4j.QueuePair qp = cs[0].queuePair();
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                CompletableFuture<String> direct = new CompletableFuture<>();
                Thread other = Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        qp.close();
                        direct.complete("closed");
                    } catch (IllegalStateException | InterruptedException e) {
                        direct.complete(e.toString());
                    }
                });
                go.countDown();
                cs[0].close();
                other.join(TimeUnit.SECONDS.toMillis(T));
                assertThat(direct).as("round %d: the queue pair's own close", round).isCompletedWithValue("closed");
                assertThat(qp.isClosed()).isTrue();
                cs[1].close();
            }
        } // closes the CQs and PDs: refused if a queue pair stayed in the kernel
    }
}
