package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.RemoteRegion;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The TCP endpoint exchange on loopback, and its refusal of garbage. */
class EndpointExchangeTest {
    private static final Gid GID = Gid.parseHex("00000000000000000000ffffc6120001");

    @Test
    void bothSidesGetTheOthersOffer() throws Exception {
        EndpointExchange.Offer server = EndpointExchange.Offer.of(new QpEndpoint(0, 0x11, 0xabcdef, GID),
                new RemoteRegion(0x7f0000001000L, 4096, 0x1234), new RemoteRegion(-4096L, 8, -1));
        EndpointExchange.Offer client = EndpointExchange.Offer.of(new QpEndpoint(0xffff, 0xffffff, 0, Gid.ZERO));
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<EndpointExchange.Offer> atServer = CompletableFuture.supplyAsync(() -> {
                try {
                    return EndpointExchange.accept(ss, server, Duration.ofSeconds(30));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            EndpointExchange.Offer atClient = EndpointExchange.connect(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), ss.getLocalPort()), client,
                    Duration.ofSeconds(30));
            assertThat(atClient).isEqualTo(server);
            assertThat(atServer.get()).isEqualTo(client);
        }
    }

    @Test
    void clientRetriesUntilTheServerListens() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        EndpointExchange.Offer offer = EndpointExchange.Offer.of(new QpEndpoint(1, 2, 3, GID));
        CompletableFuture<EndpointExchange.Offer> client = CompletableFuture.supplyAsync(() -> {
            try {
                return EndpointExchange.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), offer,
                        Duration.ofSeconds(30));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        try (ServerSocket ss = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertThat(EndpointExchange.accept(ss, offer, Duration.ofSeconds(30))).isEqualTo(offer);
        }
        assertThat(client.get()).isEqualTo(offer);
    }

    @Test
    void wireFormatIsTheDocumentedOne() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EndpointExchange.write(out, EndpointExchange.Offer.of(new QpEndpoint(0x0102, 0x030405, 0x060708, GID),
                new RemoteRegion(0x1122334455667788L, 0x10, 0x99aabbcc)));
        assertThat(HexFormat.of().formatHex(out.toByteArray())).isEqualTo("72646d61346a0001" + "0102" + "00030405"
                + "00060708" + "00000000000000000000ffffc6120001" + "0001" + "1122334455667788" + "0000000000000010"
                + "99aabbcc");
    }

    @Test
    void refusesAPeerThatSpeaksSomethingElse() {
        byte[] pingpong = "0000:000011:abcdef:00000000000000000000ffffc6120001\0".getBytes();
        assertThatThrownBy(() -> EndpointExchange.read(new ByteArrayInputStream(pingpong)))
                .isInstanceOf(IOException.class).hasMessageContaining("bad magic");
        byte[] truncated = HexFormat.of().parseHex("72646d61346a000101");
        assertThatThrownBy(() -> EndpointExchange.read(new ByteArrayInputStream(truncated)))
                .isInstanceOf(java.io.EOFException.class);
        byte[] badQpn = HexFormat.of().parseHex("72646d61346a0001" + "0000" + "ff000000" + "00000000"
                + "00000000000000000000000000000000" + "0000");
        assertThatThrownBy(() -> EndpointExchange.read(new ByteArrayInputStream(badQpn)))
                .isInstanceOf(IOException.class).hasMessageContaining("invalid endpoint");
    }
}
