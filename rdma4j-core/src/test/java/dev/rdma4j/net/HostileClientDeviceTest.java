package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.TestDevice;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmEventType;
import dev.rdma4j.connect.CmException;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Hostile clients of the short path's listeners (issue 12): raw TCP sockets sending malformed endpoint
 * exchanges to an {@link RdmaServer} with {@link RdmaOptions.Exchange#TCP}, and rdma_cm clients sending
 * private data no rdma4j peer sends to one with rdma_cm. Each accept ends with an exception naming what is
 * wrong, within the options' timeout (a silent or slow-loris client included), and the server then serves a
 * well-formed client.
 */
@Tag("device")
class HostileClientDeviceTest {
    private static final long T = 120;
    /** The server's timeout: long enough for a well-formed client in the emulated guest. */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static InetSocketAddress address() throws Exception {
        InetAddress ip;
        try (Context ctx = TestDevice.device().open()) {
            ip = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID"));
        }
        return new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    private static Throwable failureOf(CompletableFuture<RdmaConnection> accept) throws Exception {
        try {
            RdmaConnection c = accept.get(T, TimeUnit.SECONDS);
            c.close();
            throw new AssertionError("the server accepted a hostile client: " + c);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    /** A well-formed client connects, and a message goes each way. */
    private static void assertServes(RdmaServer server, RdmaOptions o) throws Exception {
        CompletableFuture<RdmaConnection> accept = server.acceptAsync();
        try (RdmaConnection client = RdmaClient.connect(server.localAddress(), o);
                RdmaConnection served = accept.get(T, TimeUnit.SECONDS)) {
            client.send("ping".getBytes());
            try (Message m = served.receive()) {
                assertThat(new String(m.bytes())).isEqualTo("ping");
            }
            served.send("pong".getBytes());
            try (Message m = client.receive()) {
                assertThat(new String(m.bytes())).isEqualTo("pong");
            }
        }
    }

    @Test
    void tcpServerRefusesMalformedExchangesAndServesTheNextClient() throws Exception {
        String header = "72646d61346a0001" + "0000" + "00000033" + "00654321" + "00".repeat(16);
        record Case(String what, String hex, boolean close, Class<? extends IOException> type, String message) {
        }
        List<Case> cases = List.of(
                new Case("connect and close", "", true, EOFException.class, "after 0 bytes"),
                new Case("garbage", "deadbeef".repeat(32), true, IOException.class, "bad magic"),
                new Case("truncated", header.substring(0, 40), true, EOFException.class, "after 20 bytes"),
                new Case("oversized", header + "ffff" + "00".repeat(64), true, IOException.class,
                        "65535 regions"),
                new Case("silent", "", false, SocketTimeoutException.class, "0 bytes"));
        RdmaOptions o = RdmaOptions.builder().exchange(RdmaOptions.Exchange.TCP).timeout(TIMEOUT).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            for (Case c : cases) {
                CompletableFuture<RdmaConnection> accept = server.acceptAsync();
                long t0 = System.nanoTime();
                try (Socket raw = new Socket(server.localAddress().getAddress(), server.localAddress().getPort())) {
                    raw.getOutputStream().write(HexFormat.of().parseHex(c.hex()));
                    raw.getOutputStream().flush();
                    if (c.close()) {
                        raw.shutdownOutput();
                    }
                    assertThat(failureOf(accept)).as(c.what()).isInstanceOf(c.type())
                            .hasMessageContaining(c.message());
                }
                assertThat(System.nanoTime() - t0).as(c.what() + ": within the timeout")
                        .isLessThan(TIMEOUT.plusSeconds(20).toNanos());
                assertServes(server, o);
            }
        }
    }

    @Test
    void tcpServerCutsOffASlowLorisAtItsTimeout() throws Exception {
        byte[] offer = HexFormat.of().parseHex("72646d61346a0001" + "0000" + "00000033" + "00654321"
                + "00".repeat(16) + "0010" + "00".repeat(20 * 16));
        RdmaOptions o = RdmaOptions.builder().exchange(RdmaOptions.Exchange.TCP).timeout(TIMEOUT).build();
        try (RdmaServer server = RdmaServer.listen(address(), o);
                Socket loris = new Socket(server.localAddress().getAddress(), server.localAddress().getPort())) {
            CompletableFuture<RdmaConnection> accept = server.acceptAsync();
            long t0 = System.nanoTime();
            Thread dripper = Thread.ofVirtual().start(() -> {
                try {
                    OutputStream out = loris.getOutputStream();
                    for (byte b : offer) { // 374 bytes, one per second: 6 minutes
                        out.write(b);
                        out.flush();
                        Thread.sleep(1000);
                    }
                } catch (IOException | InterruptedException e) {
                    // cut off by the server: expected
                }
            });
            Throwable e = failureOf(accept);
            long took = System.nanoTime() - t0;
            dripper.interrupt();
            assertThat(e).isInstanceOf(SocketTimeoutException.class).hasMessageContaining("within " + TIMEOUT);
            assertThat(took).isLessThan(TIMEOUT.plusSeconds(20).toNanos());
            assertServes(server, o);
        }
    }

    /** An rdma_cm client with the given private data, and the server's accept of it. */
    private static Throwable[] cmClient(RdmaServer server, CompletionEngine engine, byte[] privateData,
            List<AutoCloseable> resources) throws Exception {
        CompletableFuture<RdmaConnection> accept = server.acceptAsync();
        CmEventChannel channel = CmEventChannel.create(engine);
        resources.add(0, channel);
        CompletableFuture<CmConnection> client = CmConnection.connectAsync(channel, server.localAddress(), ctx -> {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
            synchronized (resources) {
                resources.add(0, pd);
                resources.add(0, cq);
            }
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(8, 8);
        }, privateData, TIMEOUT);
        Throwable clientFailure;
        try {
            CmConnection c = client.get(T, TimeUnit.SECONDS);
            synchronized (resources) {
                resources.add(0, c);
            }
            clientFailure = null;
        } catch (ExecutionException e) {
            clientFailure = e.getCause();
        }
        return new Throwable[] {failureOf(accept), clientFailure};
    }

    @Test
    void cmServerRejectsPrivateDataNoRdma4jClientSendsAndServesTheNextClient() throws Exception {
        byte[] negative = new byte[20];
        java.util.Arrays.fill(negative, (byte) 0xff);
        record Case(String what, byte[] data, String message) {
        }
        List<Case> cases = List.of(
                new Case("too short", new byte[] {1, 2, 3, 4, 5, 6, 7}, "7 bytes of private data"),
                new Case("too long (a C client's padding)", new byte[52], "52 bytes of private data"),
                new Case("garbage: negative length", negative, "negative length"),
                new Case("an empty region", ByteBuffer.allocate(20).putLong(0x1000).putLong(0).putInt(1).array(),
                        "empty region"));
        RdmaOptions o = RdmaOptions.builder().timeout(TIMEOUT).exposeRegion(4096).build();
        List<AutoCloseable> resources = new ArrayList<>();
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                RdmaServer server = RdmaServer.listen(address(), o)) {
            try {
                for (Case c : cases) {
                    Throwable[] r = cmClient(server, engine, c.data(), resources);
                    assertThat(r[0]).as(c.what()).isInstanceOf(ProtocolException.class)
                            .hasMessageContaining(c.message());
                    assertThat(r[1]).as(c.what() + ": the client is rejected").isInstanceOfSatisfying(
                            CmException.class, e -> assertThat(e.event()).isEqualTo(CmEventType.REJECTED));
                    assertServes(server, o);
                }
            } finally {
                for (AutoCloseable a : resources) {
                    a.close();
                }
            }
        }
    }

    @Test
    void cmServerAcceptsAClientWithoutPrivateDataAsOneExposingNoRegion() throws Exception {
        RdmaOptions o = RdmaOptions.builder().timeout(TIMEOUT).build();
        List<AutoCloseable> resources = new ArrayList<>();
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                RdmaServer server = RdmaServer.listen(address(), o)) {
            try {
                CompletableFuture<RdmaConnection> accept = server.acceptAsync();
                CmEventChannel channel = CmEventChannel.create(engine);
                resources.add(0, channel);
                CompletableFuture<CmConnection> client = CmConnection.connectAsync(channel, server.localAddress(),
                        ctx -> {
                            ProtectionDomain pd = ctx.allocateProtectionDomain();
                            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
                            resources.add(0, pd);
                            resources.add(0, cq);
                            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(8, 8);
                        }, new byte[0], TIMEOUT);
                try (RdmaConnection served = accept.get(T, TimeUnit.SECONDS)) {
                    resources.add(0, client.get(T, TimeUnit.SECONDS));
                    assertThat(org.assertj.core.api.Assertions.catchThrowable(served::peerRegion))
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining("exposes no region");
                }
            } finally {
                for (AutoCloseable a : resources) {
                    a.close();
                }
            }
            assertServes(server, o);
        }
    }
}
