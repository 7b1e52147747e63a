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

    /**
     * Issue 10, item 10: a barrier after the exchange. The client's sync returns only once the server has
     * reached its own (here 300 ms later, as if moving its queue pair to RTS took that long); twice, too.
     */
    @Test
    void syncReturnsOnlyOnceThePeerHasSyncedToo() throws Exception {
        EndpointExchange.Offer server = EndpointExchange.Offer.of(new QpEndpoint(1, 2, 3, GID));
        EndpointExchange.Offer client = EndpointExchange.Offer.of(new QpEndpoint(4, 5, 6, GID));
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Long> serverSyncedAt = CompletableFuture.supplyAsync(() -> {
                try (EndpointExchange.Session s = EndpointExchange.acceptSession(ss, server, Duration.ofSeconds(30))) {
                    assertThat(s.peer()).isEqualTo(client);
                    Thread.sleep(300);
                    long at = System.nanoTime();
                    s.sync();
                    s.sync();
                    return at;
                } catch (IOException | InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            try (EndpointExchange.Session s = EndpointExchange.connectSession(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), ss.getLocalPort()), client,
                    Duration.ofSeconds(30))) {
                assertThat(s.peer()).isEqualTo(server);
                s.sync();
                long returnedAt = System.nanoTime();
                s.sync();
                assertThat(returnedAt).isGreaterThanOrEqualTo(serverSyncedAt.get());
            }
        }
    }

    /** A peer that leaves, that never syncs, or that sends something else fails the sync with an IOException. */
    @Test
    void syncReportsAPeerThatLeftStallsOrSpeaksOutOfTurn() throws Exception {
        EndpointExchange.Offer offer = EndpointExchange.Offer.of(new QpEndpoint(1, 2, 3, GID));
        for (boolean leaves : new boolean[] {true, false}) {
            try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
                CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                    try (EndpointExchange.Session s = EndpointExchange.acceptSession(ss, offer, Duration.ofSeconds(30))) {
                        assertThat(s.peer()).isEqualTo(offer);
                        if (!leaves) {
                            done.await(); // stays, never syncs
                        }
                    } catch (IOException | InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                });
                try (EndpointExchange.Session s = EndpointExchange.connectSession(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), ss.getLocalPort()), offer,
                        Duration.ofMillis(leaves ? 30_000 : 300))) {
                    if (leaves) {
                        assertThatThrownBy(s::sync).isInstanceOf(java.io.EOFException.class)
                                .hasMessageContaining("closed the endpoint exchange before its sync()");
                    } else {
                        assertThatThrownBy(s::sync).isInstanceOf(java.net.SocketTimeoutException.class);
                    }
                } finally {
                    done.countDown();
                }
                server.get();
            }
        }
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort());
                java.net.Socket a = ss.accept()) {
            a.getOutputStream().write('x');
            c.setSoTimeout(30_000);
            assertThatThrownBy(() -> EndpointExchange.sync(c)).isInstanceOf(IOException.class)
                    .hasMessageContaining("the peer sent 0x78 where a sync was expected");
        }
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

    // ---- hostile clients (issue 12): raw sockets sending what no rdma4j peer would ----

    private static final EndpointExchange.Offer SERVER = EndpointExchange.Offer.of(
            new QpEndpoint(0, 0x22, 0x123456, GID), new RemoteRegion(0x7f0000002000L, 64, 0x77));
    private static final EndpointExchange.Offer GOOD_CLIENT = EndpointExchange.Offer.of(
            new QpEndpoint(0, 0x33, 0x654321, GID));
    private static final String HEADER = "72646d61346a0001" + "0000" + "00000033" + "00654321"
            + "00000000000000000000ffffc6120001";

    /** Writes {@code bytes} from a raw socket, half-closes, and keeps the socket open until the test ends. */
    private static java.net.Socket rawClient(ServerSocket ss, byte[] bytes) throws IOException {
        java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort());
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
        s.shutdownOutput();
        return s;
    }

    private static void assertServesAWellFormedClientNext(ServerSocket ss) throws Exception {
        CompletableFuture<EndpointExchange.Offer> client = CompletableFuture.supplyAsync(() -> {
            try {
                return EndpointExchange.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                        ss.getLocalPort()), GOOD_CLIENT, Duration.ofSeconds(30));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        try (EndpointExchange.Session s = EndpointExchange.acceptSession(ss, SERVER, Duration.ofSeconds(30))) {
            assertThat(s.peer()).isEqualTo(GOOD_CLIENT);
        }
        assertThat(client.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(SERVER);
    }

    @Test
    @SuppressWarnings("try") // the raw client stays open while the server reads
    void malformedOffersAreRefusedByNameAndTheListenerServesTheNextClient() throws Exception {
        record Case(String what, String hex, Class<? extends IOException> type, String message) {
        }
        java.util.List<Case> cases = java.util.List.of(
                new Case("connect and close at once", "", java.io.EOFException.class,
                        "closed the connection after 0 bytes"),
                new Case("garbage", "00ff".repeat(40), IOException.class, "bad magic"),
                new Case("HTTP", HexFormat.of().formatHex("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()),
                        IOException.class, "bad magic"),
                new Case("truncated in the endpoint", HEADER.substring(0, 30), java.io.EOFException.class,
                        "closed the connection after 15 bytes"),
                new Case("truncated in the regions", HEADER + "0002" + "1122334455667788" + "00000000",
                        java.io.EOFException.class, "closed the connection after 48 bytes of its endpoint exchange offer (76 expected)"),
                new Case("oversized: 65535 regions", HEADER + "ffff" + "00".repeat(200), IOException.class,
                        "offers 65535 regions, more than 4096"),
                new Case("negative region length", HEADER + "0001" + "0000000000001000" + "8000000000000000"
                        + "00000001", IOException.class, "negative length"),
                new Case("QPN beyond 24 bits", "72646d61346a0001" + "0000" + "ff000000" + "00000000"
                        + "00".repeat(16) + "0000", IOException.class, "invalid endpoint"));
        try (ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            for (Case c : cases) {
                try (java.net.Socket raw = rawClient(ss, HexFormat.of().parseHex(c.hex()))) {
                    long t0 = System.nanoTime();
                    assertThatThrownBy(() -> EndpointExchange.acceptSession(ss, SERVER, Duration.ofSeconds(20)))
                            .as(c.what()).isInstanceOf(c.type()).hasMessageContaining(c.message());
                    assertThat(System.nanoTime() - t0).as(c.what() + ": refused at once, not at the deadline")
                            .isLessThan(Duration.ofSeconds(10).toNanos());
                }
                assertServesAWellFormedClientNext(ss);
            }
        }
    }

    @Test
    @SuppressWarnings("try") // the silent client stays open while the server waits
    void aSilentClientTimesOutAtTheDeadline() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
                java.net.Socket silent = new java.net.Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> EndpointExchange.acceptSession(ss, SERVER, Duration.ofMillis(800)))
                    .isInstanceOf(java.net.SocketTimeoutException.class)
                    .hasMessageContaining("0 bytes").hasMessageContaining("PT0.8S");
            assertThat(System.nanoTime() - t0).isBetween(Duration.ofMillis(700).toNanos(), Duration.ofSeconds(5).toNanos());
            assertServesAWellFormedClientNext(ss);
        }
    }

    /**
     * A slow-loris client sends a well-formed offer one byte every 150 ms: each read returns well within the
     * timeout, but the whole offer must arrive within it, so the accept ends near the timeout, not after
     * the minutes the client would take.
     */
    @Test
    void aSlowLorisClientIsCutOffAtTheDeadlineOfTheWholeOffer() throws Exception {
        byte[] offer = HexFormat.of().parseHex(HEADER + "0064" + "00".repeat(20 * 100)); // 100 regions, 2 KiB
        try (ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
                java.net.Socket loris = new java.net.Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
            Thread dripper = Thread.ofVirtual().start(() -> {
                try {
                    for (byte b : offer) {
                        loris.getOutputStream().write(b);
                        loris.getOutputStream().flush();
                        Thread.sleep(150);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server gave up on it: expected
                }
            });
            CompletableFuture<Throwable> accept = CompletableFuture.supplyAsync(() -> {
                try {
                    EndpointExchange.acceptSession(ss, SERVER, Duration.ofSeconds(2)).close();
                    return null;
                } catch (IOException e) {
                    return e;
                }
            });
            long t0 = System.nanoTime();
            Throwable e = accept.get(20, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(6).toNanos());
            assertThat(e).isInstanceOf(java.net.SocketTimeoutException.class)
                    .hasMessageContaining("within PT2S");
            dripper.interrupt();
            assertServesAWellFormedClientNext(ss);
        }
    }
}
