package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.Context;
import dev.rdma4j.TestDevice;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 29, finding 2, on the short path: {@code accept}, {@code send} and {@code receive} with a {@link Duration}
 * beyond {@code Long.MAX_VALUE} nanoseconds threw {@code ArithmeticException} (the send after it was queued); such
 * a timeout now means no deadline, and a negative one is an {@link IllegalArgumentException} before anything is
 * done; options with a huge timeout connect (their timeout became socket and rdma_cm timeouts).
 */
@Tag("device")
class HugeTimeoutsDeviceTest {
    private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void hugeTimeoutsMeanNoDeadline(RdmaOptions.Exchange exchange) throws Exception {
        InetAddress ip;
        try (Context ctx = TestDevice.device().open()) {
            ip = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID"));
        }
        RdmaOptions o = RdmaOptions.builder().exchange(exchange).timeout(HUGE).build();
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(ip, 0), o)) {
            CompletableFuture<RdmaConnection> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept(HUGE);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (RdmaConnection c = RdmaClient.connect(server.localAddress(), o);
                    RdmaConnection s = accepted.get(120, java.util.concurrent.TimeUnit.SECONDS)) {
                c.send(MemorySegment.ofArray("no deadline".getBytes(StandardCharsets.US_ASCII)), HUGE);
                try (Message m = s.receive(HUGE)) {
                    assertThat(new String(m.bytes(), StandardCharsets.US_ASCII)).isEqualTo("no deadline");
                }
                assertThatThrownBy(() -> c.send(MemorySegment.ofArray(new byte[1]), Duration.ofNanos(-1)))
                        .isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> s.receive(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
                // nothing was sent by the refused call
                c.send(MemorySegment.ofArray("next".getBytes(StandardCharsets.US_ASCII)), HUGE);
                try (Message m = s.receive(HUGE)) {
                    assertThat(new String(m.bytes(), StandardCharsets.US_ASCII)).isEqualTo("next");
                }
            }
            assertThatThrownBy(() -> server.accept(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
