package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.Gcc;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PingpongExchangeTest {
    private static final QpEndpoint A = new QpEndpoint(0, 0x11, 0xb61041,
            Gid.parseHex("00000000000000000000ffffc6120001"));
    private static final QpEndpoint B = new QpEndpoint(0x1234, 0xabcdef, 0x000001,
            Gid.parseHex("fe800000000000000250b6fffe123456"));

    @Test
    void messageIs51CharactersAndANul() {
        byte[] msg = PingpongExchange.encode(A);
        assertThat(msg).hasSize(52);
        assertThat(new String(msg, 0, 51, US_ASCII))
                .isEqualTo("0000:000011:b61041:00000000000000000000ffffc6120001");
        assertThat(msg[51]).isZero();
    }

    /**
     * The C examples build the message with {@code sprintf("%04x:%06x:%06x:%s")} from a GID turned into
     * four {@code htobe32}'d 32-bit words, and read it back with {@code sscanf} and {@code be32toh}: the
     * same bytes both ways on this (little-endian) machine.
     */
    @Test
    void agreesWithTheCWireFormat(@TempDir Path dir) throws Exception {
        List<String> c = Gcc.run(dir, """
                #include <endian.h>
                #include <stdint.h>
                #include <stdio.h>
                #include <string.h>
                int main(int argc, char **argv) {
                  unsigned char gid[16]; uint32_t w[4]; char wire[33]; char msg[52];
                  int lid, qpn, psn;
                  sscanf(argv[1], "%x", &lid); sscanf(argv[2], "%x", &qpn); sscanf(argv[3], "%x", &psn);
                  for (int i = 0; i < 16; i++) sscanf(argv[4] + 2 * i, "%2hhx", &gid[i]);
                  memcpy(w, gid, 16);
                  for (int i = 0; i < 4; i++) sprintf(wire + 8 * i, "%08x", htobe32(w[i]));
                  sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, wire);
                  for (size_t i = 0; i < sizeof msg; i++) printf("%02x", (unsigned char) msg[i]);
                  printf("\\n");
                  /* and back, as the receiving side does */
                  int l2, q2, p2; char g2[33]; char tmp[9]; uint32_t v; unsigned char back[16];
                  sscanf(msg, "%x:%x:%x:%s", &l2, &q2, &p2, g2);
                  for (int i = 0; i < 4; i++) { memcpy(tmp, g2 + 8 * i, 8); tmp[8] = 0; sscanf(tmp, "%x", &v);
                    w[i] = be32toh(v); }
                  memcpy(back, w, 16);
                  printf("%x %x %x ", l2, q2, p2);
                  for (int i = 0; i < 16; i++) printf("%02x", back[i]);
                  printf("\\n");
                  return 0;
                }
                """, "1234", "abcdef", "1", B.gid().toHex());
        assertThat(c.get(0)).isEqualTo(HexFormat.of().formatHex(PingpongExchange.encode(B)));
        QpEndpoint decoded = PingpongExchange.decode(HexFormat.of().parseHex(c.get(0)));
        assertThat(decoded).isEqualTo(B);
        assertThat(c.get(1)).isEqualTo("1234 abcdef 1 " + B.gid().toHex());
    }

    @Test
    void decodeRefusesGarbage() {
        assertThatThrownBy(() -> PingpongExchange.decode("hello".getBytes(US_ASCII)))
                .isInstanceOf(PingpongException.class).hasMessageContaining("Malformed remote address");
    }

    @Test
    void javaClientAndServerExchangeAndTheServerConnectsBeforeAnswering() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        AtomicReference<QpEndpoint> connectedTo = new AtomicReference<>();
        CompletableFuture<QpEndpoint> server = CompletableFuture.supplyAsync(() -> {
            try {
                return PingpongExchange.server(port, B, connectedTo::set);
            } catch (PingpongException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
        QpEndpoint fromServer = null;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); fromServer == null;) {
            try {
                fromServer = PingpongExchange.client("localhost", port, A);
            } catch (PingpongException e) {
                assertThat(e).hasMessage("Couldn't connect to localhost:" + port); // not listening yet
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        assertThat(fromServer).isEqualTo(B);
        assertThat(server.get(20, TimeUnit.SECONDS)).isEqualTo(A);
        assertThat(connectedTo.get()).isEqualTo(A);
    }

    /** The client's bytes on the wire: its 52-byte message, then "done" with its NUL after reading the server's. */
    @Test
    void clientBytesOnTheWire() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<QpEndpoint> client = CompletableFuture.supplyAsync(() -> {
                try {
                    return PingpongExchange.client("127.0.0.1", listener.getLocalPort(), A);
                } catch (PingpongException e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            });
            try (Socket s = listener.accept()) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                assertThat(in.readNBytes(52)).isEqualTo(PingpongExchange.encode(A));
                out.write(PingpongExchange.encode(B));
                assertThat(in.readAllBytes()).isEqualTo("done\0".getBytes(US_ASCII)); // then it closes
            }
            assertThat(client.get(20, TimeUnit.SECONDS)).isEqualTo(B);
        }
    }

    @Test
    void serverBytesOnTheWire() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        CompletableFuture<QpEndpoint> server = CompletableFuture.supplyAsync(() -> {
            try {
                return PingpongExchange.server(port, B, r -> { });
            } catch (PingpongException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
        Socket s = null;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); s == null;) {
            try {
                s = new Socket();
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            } catch (java.net.ConnectException e) {
                s.close();
                s = null;
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        try (Socket c = s) {
            c.getOutputStream().write(PingpongExchange.encode(A));
            assertThat(c.getInputStream().readNBytes(52)).isEqualTo(PingpongExchange.encode(B));
            c.getOutputStream().write("done\0".getBytes(US_ASCII));
            assertThat(server.get(20, TimeUnit.SECONDS)).isEqualTo(A);
            assertThat(c.getInputStream().read()).isEqualTo(-1); // the server closed
        }
    }

    @Test
    void failuresCarryTheCMessages() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        assertThatThrownBy(() -> PingpongExchange.client("127.0.0.1", port, A))
                .hasMessage("Couldn't connect to 127.0.0.1:" + port);
        try (ServerSocket taken = new ServerSocket(0)) {
            assertThatThrownBy(() -> PingpongExchange.server(taken.getLocalPort(), A, r -> { }))
                    .hasMessage("Couldn't listen to port " + taken.getLocalPort());
        }
    }

    // ---- hostile clients (issue 12): the server ends with the C tool's messages, within its timeout ----

    /** Runs {@code server(port, A, ..., 2 s)} against a raw client that {@code client} drives; returns the failure. */
    private static Throwable serverAgainst(java.util.function.Consumer<Socket> client, AtomicReference<QpEndpoint> connected)
            throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        CompletableFuture<Throwable> server = CompletableFuture.supplyAsync(() -> {
            try {
                PingpongExchange.server(port, A, connected::set, java.time.Duration.ofSeconds(2));
                return null;
            } catch (PingpongException e) {
                return e;
            }
        });
        Socket s = null;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); s == null;) {
            try {
                s = new Socket();
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            } catch (java.net.ConnectException e) {
                s.close();
                s = null;
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        try (Socket c = s) {
            Thread.ofVirtual().start(() -> client.accept(c));
            return server.get(20, TimeUnit.SECONDS);
        }
    }

    private static java.util.function.Consumer<Socket> sends(byte[] bytes, boolean close) {
        return c -> {
            try {
                c.getOutputStream().write(bytes);
                c.getOutputStream().flush();
                if (close) {
                    c.shutdownOutput();
                }
            } catch (java.io.IOException e) {
                // the server closed first
            }
        };
    }

    @Test
    void serverRefusesMalformedMessagesWithTheCMessages() throws Exception {
        AtomicReference<QpEndpoint> connected = new AtomicReference<>();
        assertThat(serverAgainst(sends(new byte[0], true), connected))
                .hasMessage("server read: short read" + System.lineSeparator() + "0/52: Couldn't read remote address");
        assertThat(serverAgainst(sends(new byte[20], true), connected))
                .hasMessageEndingWith("20/52: Couldn't read remote address");
        byte[] garbage = new byte[52];
        java.util.Arrays.fill(garbage, (byte) 'z');
        assertThat(serverAgainst(sends(garbage, true), connected)).hasMessageStartingWith("Malformed remote address");
        assertThat(connected.get()).as("the QP is connected to nothing malformed").isNull();
    }

    @Test
    void serverGivesUpOnASilentOrSlowClientAtItsTimeout() throws Exception {
        AtomicReference<QpEndpoint> connected = new AtomicReference<>();
        long t0 = System.nanoTime();
        assertThat(serverAgainst(sends(new byte[0], false), connected))
                .hasMessageStartingWith("server read: timed out: the peer sent 0 bytes in 2 s");
        byte[] msg = PingpongExchange.encode(B);
        // slow-loris: one byte every 150 ms, 7.8 s for the message; each read is quick, the whole is not
        assertThat(serverAgainst(c -> {
            try {
                for (byte b : msg) {
                    c.getOutputStream().write(b);
                    c.getOutputStream().flush();
                    Thread.sleep(150);
                }
            } catch (java.io.IOException | InterruptedException e) {
                // cut off
            }
        }, connected)).hasMessageMatching("(?s)server read: timed out: the peer sent \\d+ bytes in 2 s\\R-1/52: .*");
        assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(12));
        assertThat(connected.get()).isNull();
        // a good endpoint, then no "done": the server ends too
        assertThat(serverAgainst(sends(msg, false), connected)).hasMessage("server read: timed out: the peer sent 0"
                + " bytes in 2 s" + System.lineSeparator() + "Couldn't send/recv local address");
        assertThat(connected.get()).isEqualTo(B);
    }
}
