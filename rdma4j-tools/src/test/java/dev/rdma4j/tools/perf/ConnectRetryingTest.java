package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * {@code --connect-timeout}: the client started with (or before) its server keeps trying while the port refuses,
 * and gives up once the time is up. Real sockets on loopback.
 */
class ConnectRetryingTest {

    /** A loopback port that was free a moment ago (nothing listens on it). */
    private static InetSocketAddress freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
    }

    @Test
    void connectsToAServerThatStartsListeningLater() throws Exception {
        InetSocketAddress addr = freePort();
        CompletableFuture<Socket> client = CompletableFuture.supplyAsync(() -> {
            try {
                return PerfRun.connectRetrying(addr, 30);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        // nothing listens yet: the client keeps retrying instead of failing
        assertThatThrownBy(() -> client.get(500, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(addr, 1);
            try (Socket accepted = server.accept(); Socket s = client.get(10, TimeUnit.SECONDS)) {
                assertThat(s.isConnected()).isTrue();
                assertThat(s.getTcpNoDelay()).isTrue();
                assertThat(accepted.getPort()).isEqualTo(s.getLocalPort());
            }
        }
    }

    @Test
    void givesUpWhenTheTimeIsUp() throws Exception {
        InetSocketAddress addr = freePort();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> PerfRun.connectRetrying(addr, 1)).isInstanceOf(ConnectException.class);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(ms).as("retried for about the second it was given").isGreaterThanOrEqualTo(1000);
        assertThatThrownBy(() -> PerfRun.connectRetrying(addr, 0)).as("0: one attempt")
                .isInstanceOf(ConnectException.class);
    }
}
