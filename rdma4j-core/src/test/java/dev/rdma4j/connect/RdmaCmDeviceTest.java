package dev.rdma4j.connect;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.TestDevice;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** rdma_cm on the device: connect/accept/reject with private data, data over the connection, disconnect. */
@Tag("device")
class RdmaCmDeviceTest {
    private static final long T = 120;

    /** PDs, CQs and regions the setups allocate, closed after the connections. */
    private final List<AutoCloseable> resources = new ArrayList<>();

    private ConnectionSetup setup(CompletionEngine engine) {
        return ctx -> {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
            synchronized (resources) {
                resources.add(0, pd);
                resources.add(0, cq);
            }
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(8, 8);
        };
    }

    private static InetAddress deviceAddress() throws VerbsException {
        try (Context ctx = TestDevice.device().open()) {
            return ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID on the device"));
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String text(byte[] padded, int n) {
        return new String(Arrays.copyOf(padded, n), StandardCharsets.US_ASCII);
    }

    @Test
    void connectAcceptExchangeDataAndDisconnect() throws Exception {
        InetSocketAddress addr = new InetSocketAddress(deviceAddress(), 20_000 + ThreadLocalRandom.current().nextInt(20_000));
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            try (CmListener listener = CmListener.listen(channel, addr, 4)) {
                java.util.concurrent.LinkedBlockingQueue<CmEvent> listenerEvents = new java.util.concurrent.LinkedBlockingQueue<>();
                listener.addEventListener(listenerEvents::add);
                CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
                CompletableFuture<CmConnection> client = CmConnection.connectAsync(channel, addr, setup(engine),
                        bytes("hello from the client"), Duration.ofSeconds(30));
                CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
                assertThat(text(r.privateData(), 21)).isEqualTo("hello from the client");
                CmConnection server = r.acceptAsync(setup(engine), bytes("welcome")).get(T, TimeUnit.SECONDS);
                CmConnection c = client.get(T, TimeUnit.SECONDS);
                java.util.concurrent.LinkedBlockingQueue<CmEvent> clientEvents = new java.util.concurrent.LinkedBlockingQueue<>();
                c.addEventListener(clientEvents::add);
                assertThat(listenerEvents.poll(T, TimeUnit.SECONDS).type()).isEqualTo(CmEventType.CONNECT_REQUEST);
                try (server; c) {
                    assertThat(text(c.peerPrivateData(), 7)).isEqualTo("welcome");
                    assertThat(c.queuePair().query().state()).isEqualTo(QpState.RTS);
                    assertThat(server.queuePair().query().state()).isEqualTo(QpState.RTS);
                    assertThat(c.queuePair().query().destQpNumber()).isEqualTo(server.queuePair().qpNumber());

                    AsyncQueuePair cq = engine.wrap(c.queuePair());
                    AsyncQueuePair sq = engine.wrap(server.queuePair());
                    try (MemoryRegion cm = c.queuePair().protectionDomain().allocate(4096, AccessFlag.LOCAL_WRITE);
                            MemoryRegion sm = server.queuePair().protectionDomain().allocate(4096,
                                    AccessFlag.LOCAL_WRITE)) {
                        CompletableFuture<WorkCompletion> recv = sq.receiveAsync(sm, 0, 4096);
                        MemorySegmentText.put(cm, "over the rdma_cm connection");
                        cq.blocking().send(cm, 0, 27);
                        assertThat(recv.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(27);
                        assertThat(MemorySegmentText.get(sm, 27)).isEqualTo("over the rdma_cm connection");

                        c.disconnect();
                        server.disconnectedAsync().get(T, TimeUnit.SECONDS);
                        c.disconnectedAsync().get(T, TimeUnit.SECONDS);
                        CmEvent disconnected = clientEvents.poll(T, TimeUnit.SECONDS);
                        assertThat(disconnected).isNotNull();
                        assertThat(disconnected.type()).isEqualTo(CmEventType.DISCONNECTED);
                        assertThat(c.queuePair().query().state()).isEqualTo(QpState.ERROR);
                        assertThat(server.queuePair().query().state()).isEqualTo(QpState.ERROR);
                        cq.close();
                        sq.close();
                    }
                }
            } finally {
                closeResources();
            }
        }
    }

    @Test
    void rejectCarriesPrivateDataAndNoListenerIsAnError() throws Exception {
        InetAddress ip = deviceAddress();
        InetSocketAddress addr = new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            try (CmListener listener = CmListener.listen(channel, addr, 4)) {
                CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
                CompletableFuture<CmConnection> client = CmConnection.connectAsync(channel, addr, setup(engine),
                        bytes("let me in"), Duration.ofSeconds(30));
                request.get(T, TimeUnit.SECONDS).reject(bytes("go away"));
                assertThatThrownBy(() -> client.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOfSatisfying(CmException.class, e -> {
                            assertThat(e.event()).isEqualTo(CmEventType.REJECTED);
                            assertThat(text(e.privateData(), 7)).isEqualTo("go away");
                        });
            }
            InetSocketAddress nobody = new InetSocketAddress(ip, addr.getPort() + 1);
            CompletableFuture<CmConnection> none = CmConnection.connectAsync(channel, nobody, setup(engine), new byte[0],
                    Duration.ofSeconds(30));
            assertThatThrownBy(() -> none.get(T, TimeUnit.SECONDS)).cause().isInstanceOfSatisfying(CmException.class,
                    e -> assertThat(e.event()).isIn(CmEventType.REJECTED, CmEventType.UNREACHABLE));
            assertThatThrownBy(() -> CmConnection.connectAsync(channel, nobody, setup(engine), new byte[57],
                    Duration.ofSeconds(1)).get()).cause().isInstanceOf(IllegalArgumentException.class);
            closeResources(); // before the channel closes the device contexts they live on
        }
    }

    /**
     * The receive posted in the server's before-connect hook (QP in INIT, before rdma_accept) takes the
     * client's first send, made the moment the client sees ESTABLISHED: no receive posted after accept.
     */
    @Test
    void receivesPostedBeforeAcceptMeetAnEagerPeersFirstSend() throws Exception {
        try (CmPair p = new CmPair()) {
            List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            CompletableFuture<CompletableFuture<WorkCompletion>> serverRecv = new CompletableFuture<>();
            List<AutoCloseable> mine = new ArrayList<>();
            ConnectionSetup server = p.setup().withBeforeConnect(qp -> {
                seen.add("server " + qp.state() + "/" + qp.query().state());
                MemoryRegion mr = qp.protectionDomain().allocate(4096, AccessFlag.LOCAL_WRITE);
                AsyncQueuePair aq = p.engine.wrap(qp);
                synchronized (mine) {
                    mine.add(0, mr);
                    mine.add(0, aq);
                }
                serverRecv.complete(aq.receiveAsync(mr, 0, 4096));
            });
            ConnectionSetup client = p.setup().withBeforeConnect(qp -> seen.add("client " + qp.state() + "/"
                    + qp.query().state()));
            CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address, client,
                    new byte[0], Duration.ofSeconds(30));
            CompletableFuture<WorkCompletion> eagerSend = connecting.thenCompose(c -> { // on the engine thread
                try {
                    MemoryRegion mr = c.queuePair().protectionDomain().allocate(4096, AccessFlag.LOCAL_WRITE);
                    AsyncQueuePair aq = p.engine.wrap(c.queuePair());
                    synchronized (mine) {
                        mine.add(0, mr);
                        mine.add(0, aq);
                    }
                    MemorySegmentText.put(mr, "first!");
                    return aq.sendAsync(mr, 0, 6);
                } catch (VerbsException e) {
                    return CompletableFuture.failedFuture(e);
                }
            });
            CmConnection s = request.get(T, TimeUnit.SECONDS).acceptAsync(server, new byte[0]).get(T, TimeUnit.SECONDS);
            CmConnection c = connecting.get(T, TimeUnit.SECONDS);
            try (s; c) {
                assertThat(eagerSend.get(T, TimeUnit.SECONDS).isSuccess()).isTrue();
                WorkCompletion wc = serverRecv.get(T, TimeUnit.SECONDS).get(T, TimeUnit.SECONDS);
                assertThat(wc.isSuccess()).isTrue();
                assertThat(wc.byteLength()).isEqualTo(6);
                assertThat(seen).containsExactlyInAnyOrder("server INIT/INIT", "client INIT/INIT");
                assertThat(s.queuePair().state()).isEqualTo(QpState.RTS);
                synchronized (mine) {
                    for (AutoCloseable r : mine) {
                        r.close();
                    }
                }
            }
        }
    }

    /** A hook that throws fails the connect (or accept) with its exception and leaves nothing open. */
    @Test
    void aThrowingBeforeConnectHookFailsTheConnectionAndClosesIt() throws Exception {
        try (CmPair p = new CmPair()) {
            List<QueuePair> qps = new java.util.concurrent.CopyOnWriteArrayList<>();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address,
                    p.setup().withBeforeConnect(qp -> {
                        qps.add(qp);
                        throw new IllegalStateException("not today");
                    }), new byte[0], Duration.ofSeconds(30));
            assertThatThrownBy(() -> connecting.get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(IllegalStateException.class).hasMessage("not today");
            assertThat(qps).hasSize(1);
            assertThat(qps.get(0).isClosed()).isTrue();
        }
    }

    /**
     * rdma_bind_addr before resolving (rping -I): the server sees the client's chosen source address and
     * port; a source address the host does not have is refused by rdma_bind_addr.
     */
    @Test
    void theClientBindsToAChosenSourceAddress() throws Exception {
        try (CmPair p = new CmPair()) {
            InetSocketAddress source = new InetSocketAddress(p.address.getAddress(), p.address.getPort() + 1);
            CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, source, p.address,
                    p.setup(), new byte[0], Duration.ofSeconds(30));
            CmConnection s = request.get(T, TimeUnit.SECONDS).acceptAsync(p.setup(), new byte[0]).get(T, TimeUnit.SECONDS);
            CmConnection c = connecting.get(T, TimeUnit.SECONDS);
            try (s; c) {
                assertThat(c.localAddress()).isEqualTo(source);
                assertThat(s.peerAddress()).isEqualTo(source);
                assertThat(c.peerAddress()).isEqualTo(p.address);
                assertThat(s.localAddress()).isEqualTo(p.address);
            }
            InetSocketAddress notOurs = new InetSocketAddress(InetAddress.getByName("192.0.2.1"), 0);
            assertThatThrownBy(() -> CmConnection.connectAsync(p.channel, notOurs, p.address, p.setup(), new byte[0],
                    Duration.ofSeconds(30)).get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(VerbsException.class).hasMessageContaining("rdma_bind_addr");
        }
    }

    private static ConnectionSetup readDepth(ConnectionSetup base, int depth) {
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context context) throws VerbsException {
                return base.configure(context);
            }

            @Override
            public int readDepth() {
                return depth;
            }
        };
    }

    /** ConnectionSetup.readDepth reaches both queue pairs (max_rd_atomic, max_dest_rd_atomic); the default is 1. */
    @Test
    void theReadDepthReachesBothQueuePairs() throws Exception {
        try (CmPair p = new CmPair()) {
            for (int depth : new int[] {1, 4}) {
                ConnectionSetup s = depth == 1 ? p.setup() : readDepth(p.setup(), depth); // 1 as the default
                CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
                CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address, s,
                        new byte[0], Duration.ofSeconds(30));
                try (CmConnection server = request.get(T, TimeUnit.SECONDS).acceptAsync(s, new byte[0])
                        .get(T, TimeUnit.SECONDS); CmConnection client = connecting.get(T, TimeUnit.SECONDS)) {
                    for (CmConnection c : new CmConnection[] {client, server}) {
                        dev.rdma4j.QpAttributes a = c.queuePair().query();
                        assertThat(a.maxRdAtomic()).as("max_rd_atomic").isEqualTo(depth);
                        assertThat(a.maxDestRdAtomic()).as("max_dest_rd_atomic").isEqualTo(depth);
                    }
                }
            }
            ConnectionSetup tooDeep = readDepth(p.setup(), 256);
            CompletableFuture<CmConnection> refused = CmConnection.connectAsync(p.channel, p.address, tooDeep,
                    new byte[0], Duration.ofSeconds(30));
            assertThatThrownBy(() -> refused.get(T, TimeUnit.SECONDS)).hasCauseInstanceOf(
                    IllegalArgumentException.class).hasMessageContaining("readDepth() must be 0 to 255: 256");
        }
    }

    /**
     * Before accepting, the server reaches the request's device: it registers a region there and sends
     * its address and rkey in accept's private data; the client writes into it.
     */
    @Test
    void aRequestShowsItsDeviceSoTheAcceptCanCarryARegion() throws Exception {
        try (CmPair p = new CmPair()) {
            CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                    new byte[0], Duration.ofSeconds(30));
            CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
            Context ctx = r.context();
            // librdmacm's context names its device (read from ibv_context.device, not by listing devices)
            assertThat(ctx.device()).isEqualTo(dev.rdma4j.TestDevice.device());
            try (ProtectionDomain pd = ctx.allocateProtectionDomain();
                    CompletionQueue cq = p.engine.createCompletionQueue(ctx, 16);
                    MemoryRegion target = pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE)) {
                java.nio.ByteBuffer offer = java.nio.ByteBuffer.allocate(12).putLong(target.address())
                        .putInt(target.rkey());
                CmConnection s = r.acceptAsync(c2 -> QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(8, 8),
                        offer.array()).get(T, TimeUnit.SECONDS);
                CmConnection c = connecting.get(T, TimeUnit.SECONDS);
                try (s; c) {
                    assertThat(s.context()).isSameAs(ctx);
                    assertThat(s.queuePair().protectionDomain()).isSameAs(pd);
                    java.nio.ByteBuffer got = java.nio.ByteBuffer.wrap(c.peerPrivateData());
                    dev.rdma4j.RemoteRegion remote = new dev.rdma4j.RemoteRegion(got.getLong(), 4096, got.getInt());
                    AsyncQueuePair aq = p.engine.wrap(c.queuePair());
                    try (MemoryRegion src = c.queuePair().protectionDomain().allocate(4096, AccessFlag.LOCAL_WRITE)) {
                        MemorySegmentText.put(src, "written through the accept's rkey");
                        assertThat(aq.writeAsync(src, 0, 33, remote, 0).get(T, TimeUnit.SECONDS).isSuccess()).isTrue();
                        assertThat(MemorySegmentText.get(target, 33)).isEqualTo("written through the accept's rkey");
                    }
                    aq.close();
                }
            }
        }
    }

    /**
     * Issue 10, item 9: nothing listens on the port. The peer's CM answers with reject reason 8 (the IB
     * CM's invalid service ID), which the message spells out, without the 148 bytes of zeros the CM pads
     * the reject with.
     */
    @Test
    void connectingToAPortWithNoListenerSaysSo() throws Exception {
        InetAddress ip = deviceAddress();
        InetSocketAddress nobody = new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            CompletableFuture<CmConnection> none = CmConnection.connectAsync(channel, nobody, setup(engine), new byte[0],
                    Duration.ofSeconds(60));
            assertThatThrownBy(() -> none.get(T, TimeUnit.SECONDS)).cause().isInstanceOfSatisfying(CmException.class,
                    e -> {
                        assertThat(e.event()).isEqualTo(CmEventType.REJECTED);
                        assertThat(e.status()).isEqualTo(8);
                        assertThat(e.getMessage()).contains("connect to " + nobody).contains("no listener on that port")
                                .contains("INVALID_SERVICE_ID").doesNotContain("bytes of private data");
                    });
            closeResources();
        }
    }

    /**
     * Issue 10, item 9: an address of the device's subnet that nobody owns. The IB CM retries the connect
     * request for over a minute before reporting UNREACHABLE; the caller's timeout bounds the whole
     * connect: the future fails with a TimeoutException soon after it, and the rdma_cm id and queue pair are
     * gone (the CQ and the channel close without "still used").
     */
    @Test
    void aConnectToAnAddressNobodyOwnsFailsWithinItsTimeout() throws Exception {
        byte[] a = deviceAddress().getAddress();
        a[3] = (byte) (a[3] == (byte) 77 ? 78 : 77); // same /24 as the device, nobody there
        InetSocketAddress ghost = new InetSocketAddress(InetAddress.getByAddress(a), 7174);
        Duration timeout = Duration.ofSeconds(3);
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            List<QueuePair> qps = new java.util.concurrent.CopyOnWriteArrayList<>();
            long start = System.nanoTime();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(channel, ghost,
                    setup(engine).withBeforeConnect(qps::add), new byte[0], timeout);
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> connecting.get(T, TimeUnit.SECONDS));
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(failure).as("after %.1f s", seconds).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(java.util.concurrent.TimeoutException.class)
                    .hasMessageContaining("connect to " + ghost).hasMessageContaining("timed out after 3 s");
            assertThat(seconds).as("seconds until the future failed").isLessThan(3 + 12);
            assertThat(qps).allMatch(QueuePair::isClosed);
            closeResources(); // the CQ closes: no queue pair left on it
        } // the channel closes: no rdma_cm id left on it
    }

    /**
     * Issue 10, item 10: the CM pads private data (REQ to 56 bytes, REP to 196, REJ to 148); rdma4j
     * carries the length it was given, so each side sees exactly what the other sent, empty included.
     */
    @Test
    void privateDataArrivesWithTheLengthThePeerSent() throws Exception {
        try (CmPair p = new CmPair()) {
            byte[] max = new byte[52];
            Arrays.fill(max, (byte) 'x');
            for (byte[] sent : List.of(new byte[0], bytes("hi"), max)) {
                CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
                CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                        sent, Duration.ofSeconds(60));
                CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
                assertThat(r.privateData()).as("REQ of %d bytes", sent.length).isEqualTo(sent);
                byte[] reply = sent.length == 0 ? new byte[0] : bytes("reply of " + sent.length);
                CmConnection s = r.acceptAsync(p.setup(), reply).get(T, TimeUnit.SECONDS);
                try (s; CmConnection c = connecting.get(T, TimeUnit.SECONDS)) {
                    assertThat(c.peerPrivateData()).as("REP").isEqualTo(reply);
                    assertThat(s.peerPrivateData()).as("the server's copy of the REQ").isEqualTo(sent);
                }
            }
            CompletableFuture<CmConnectionRequest> request = p.listener.nextRequestAsync();
            CompletableFuture<CmConnection> connecting = CmConnection.connectAsync(p.channel, p.address, p.setup(),
                    new byte[0], Duration.ofSeconds(60));
            request.get(T, TimeUnit.SECONDS).reject(bytes("full"));
            assertThatThrownBy(() -> connecting.get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(CmException.class, e -> {
                        assertThat(e.privateData()).isEqualTo(bytes("full"));
                        assertThat(e.getMessage()).contains("rejected by the peer").contains("4 bytes of private data");
                    });
        }
    }

    /**
     * Issue 10, item 10: an AsyncQueuePair wrapping a connection's queue pair and the connection itself
     * both close it; either order works, pending receives fail, and nothing is left open.
     */
    @Test
    void anAsyncQueuePairAndItsConnectionCloseInEitherOrder() throws Exception {
        try (CmPair p = new CmPair()) {
            for (boolean connectionFirst : new boolean[] {false, true}) {
                CmConnection[] c = p.connect();
                AsyncQueuePair aq = p.engine.wrap(c[0].queuePair());
                try (MemoryRegion mr = c[0].queuePair().protectionDomain().allocate(4096, AccessFlag.LOCAL_WRITE)) {
                    CompletableFuture<WorkCompletion> pending = aq.receiveAsync(mr, 0, 4096);
                    if (connectionFirst) {
                        c[0].close();
                        aq.close();
                    } else {
                        aq.close();
                        c[0].close();
                    }
                    assertThat(c[0].isClosed()).as("connection closed, connection first: %s", connectionFirst).isTrue();
                    assertThat(c[0].queuePair().isClosed()).isTrue();
                    assertThatThrownBy(() -> pending.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
                    c[0].close(); // idempotent both
                    aq.close();
                }
                c[1].disconnectedAsync().get(T, TimeUnit.SECONDS);
                c[1].close();
            }
        } // CmPair closes the CQs, PDs and the channel: refused if anything were left
    }

    private void closeResources() throws Exception {
        synchronized (resources) {
            for (AutoCloseable r : resources) {
                r.close();
            }
            resources.clear();
        }
    }

    /** ASCII in and out of a region. */
    static final class MemorySegmentText {
        private MemorySegmentText() {
        }

        static void put(MemoryRegion r, String s) {
            byte[] b = bytes(s);
            java.lang.foreign.MemorySegment.copy(b, 0, r.segment(), JAVA_BYTE, 0, b.length);
        }

        static String get(MemoryRegion r, int n) {
            return new String(r.segment().asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.US_ASCII);
        }
    }
}
