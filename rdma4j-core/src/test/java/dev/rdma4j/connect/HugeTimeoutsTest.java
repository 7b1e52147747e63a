package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.net.RdmaOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, finding 2, where no device is needed: a {@link Duration} too long for nanoseconds threw
 * {@code ArithmeticException} out of the calls that take one; now such a timeout means "no deadline" (it is
 * clamped to {@code Long.MAX_VALUE} nanoseconds, about 292 years), and a negative one is an
 * {@link IllegalArgumentException}, before anything is done.
 */
class HugeTimeoutsTest {
    private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

    @Test
    void theEndpointExchangeTakesAHugeTimeoutAsNoDeadline() throws Exception {
        EndpointExchange.Offer a = EndpointExchange.Offer.of(new QpEndpoint(1, 2, 3, Gid.ZERO));
        EndpointExchange.Offer b = EndpointExchange.Offer.of(new QpEndpoint(4, 5, 6, Gid.ZERO));
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<EndpointExchange.Offer> atServer = CompletableFuture.supplyAsync(() -> {
                try {
                    return EndpointExchange.accept(ss, a, HUGE);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            EndpointExchange.Offer atClient = EndpointExchange.connect(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), ss.getLocalPort()), b, HUGE);
            assertThat(atClient).isEqualTo(a);
            assertThat(atServer.get(30, TimeUnit.SECONDS)).isEqualTo(b);
        }
    }

    @Test
    void theEndpointExchangeRefusesANegativeTimeout() throws Exception {
        EndpointExchange.Offer a = EndpointExchange.Offer.of(new QpEndpoint(1, 2, 3, Gid.ZERO));
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> EndpointExchange.connect(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), ss.getLocalPort()), a,
                    Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("a timeout must not be negative: PT-0.001S");
            assertThatThrownBy(() -> EndpointExchange.accept(ss, a, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void theShortPathsOptionsClampAHugeTimeout() {
        assertThat(RdmaOptions.builder().timeout(HUGE).build().timeout()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        assertThat(RdmaOptions.builder().timeout(Duration.ofDays(1)).build().timeout()).isEqualTo(Duration.ofDays(1));
    }
}
