package dev.rdma4j.connect;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.AddressHandle;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.SendBatch;
import dev.rdma4j.UdDestination;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm beyond RC on the device: a UD peer resolved through a UDP listener (SIDR) with datagrams both ways, the
 * reply's address handle made from a receive ({@code ibv_create_ah_from_wc}), rejects, and multicast groups joined,
 * sent to, received from and left; and a datagram's close against what its groups and its queue pair do meanwhile
 * (a join pending or being handled, a full member still joined, the queue pair's own close on another thread).
 */
@Tag("device")
class CmDatagramDeviceTest {
    private static final long T = 120;
    private static final Duration RESOLVE = Duration.ofSeconds(10);
    private static final Duration WHOLE = Duration.ofSeconds(60);
    private static final int GRH = QueuePair.UD_GRH_BYTES;
    private static final int SLOT = GRH + 256;

    /** One side's PD, CQ and region, made by its setup. */
    private static final class Side {
        ProtectionDomain pd;
        CompletionQueue cq;
        MemoryRegion mr;
        final WorkCompletions wcs = new WorkCompletions(16);

        List<WorkCompletion> await(int n) throws VerbsException {
            List<WorkCompletion> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
            while (out.size() < n) {
                int got = cq.poll(wcs);
                for (int i = 0; i < got; i++) {
                    out.add(wcs.get(i));
                }
                if (got == 0) {
                    assertThat(System.nanoTime()).as("waiting for %d completion(s), got %s", n, out)
                            .isLessThan(deadline);
                    Thread.onSpinWait();
                }
            }
            return out;
        }

        /** Nothing arrives on the CQ while {@code ms} pass. */
        void assertQuiet(long ms) throws VerbsException {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
            while (System.nanoTime() < end) {
                assertThat(cq.poll(wcs)).as("a completion after the group was left").isZero();
                Thread.onSpinWait();
            }
        }
    }

    private final List<Side> sides = new ArrayList<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** A UD setup that allocates its side's resources and posts {@code receives} receives before connecting. */
    private ConnectionSetup setup(Side s, int receives) {
        return new ConnectionSetup() {
            @Override
            public dev.rdma4j.QueuePairBuilder configure(dev.rdma4j.Context ctx) throws VerbsException {
                s.pd = ctx.allocateProtectionDomain();
                s.cq = ctx.createCompletionQueue(64);
                s.mr = s.pd.allocate(16 * SLOT, AccessFlag.LOCAL_WRITE);
                synchronized (sides) {
                    sides.add(0, s);
                }
                return QueuePair.builder(s.pd, QpType.UD).completionQueue(s.cq).capacity(16, 16);
            }

            @Override
            public void beforeConnect(QueuePair qp) throws VerbsException {
                for (int i = 0; i < receives; i++) {
                    qp.postReceive(100 + i, s.mr, (long) i * SLOT, SLOT);
                }
            }
        };
    }

    @AfterEach
    void closeAll() {
        for (AutoCloseable c : toClose.reversed()) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the test closed it already
            }
        }
        for (Side s : sides) {
            for (AutoCloseable c : new AutoCloseable[] {s.mr, s.cq, s.pd}) {
                try {
                    if (c != null) {
                        c.close();
                    }
                } catch (Exception ignored) {
                    // closed already
                }
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String text(byte[] b, int n) {
        return new String(Arrays.copyOf(b, n), StandardCharsets.US_ASCII);
    }

    private <T extends AutoCloseable> T closing(T c) {
        toClose.add(c);
        return c;
    }

    private static InetSocketAddress someAddress() throws VerbsException {
        return new InetSocketAddress(CmPair.deviceAddress(), 20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    @Test
    void udPeerResolvedBySidrExchangesDatagramsBothWays() throws Exception {
        InetSocketAddress addr = someAddress();
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        CmListener listener = closing(CmListener.listen(channel, addr, 4, CmPortSpace.UDP));
        assertThat(listener.portSpace()).isEqualTo(CmPortSpace.UDP);
        Side client = new Side();
        Side server = new Side();
        CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
        CompletableFuture<CmDatagram> connecting = CmDatagram.connectAsync(channel, null, addr, setup(client, 4),
                bytes("hello over SIDR"), RESOLVE, WHOLE);
        CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
        assertThat(r.portSpace()).isEqualTo(CmPortSpace.UDP);
        assertThat(text(r.privateData(), 15)).isEqualTo("hello over SIDR");
        assertThat(r.privateData()).hasSize(CmDatagram.CONNECT_PRIVATE_DATA); // padded by the CM, no trailer
        assertThatThrownBy(() -> r.acceptAsync(ctx -> null, new byte[0])).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("acceptDatagramAsync");
        CmDatagram s = closing(r.acceptDatagramAsync(setup(server, 4), bytes("welcome")).get(T, TimeUnit.SECONDS));
        CmDatagram c = closing(connecting.get(T, TimeUnit.SECONDS));

        UdDestination peer = c.peer().orElseThrow();
        assertThat(peer.qpNumber()).isEqualTo(s.queuePair().qpNumber());
        assertThat(peer.qkey()).isEqualTo(CmDatagram.QKEY);
        assertThat(text(c.peerPrivateData(), 7)).isEqualTo("welcome");
        assertThat(s.peer()).isEmpty();
        assertThat(c.queuePair().query().state()).isEqualTo(QpState.RTS);
        assertThat(s.queuePair().query().state()).isEqualTo(QpState.RTS);
        assertThat(s.queuePair().query().qkey()).isEqualTo(CmDatagram.QKEY);
        assertThat(c.localAddress().getAddress()).isEqualTo(addr.getAddress());

        // client -> server: a send with immediate data (the client's QP number, as udaddy sends it)
        client.mr.segment().asSlice(0, 5).copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes("ping!")));
        try (SendBatch b = new SendBatch(1, 1)) {
            c.queuePair().post(b.sendWithImmediate(1, client.mr, 0, 5, c.queuePair().qpNumber()).to(peer));
        }
        assertThat(client.await(1).get(0).isSuccess()).isTrue();
        WorkCompletion got = server.await(1).get(0);
        assertThat(got.isSuccess()).isTrue();
        assertThat(got.opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(got.byteLength()).isEqualTo(GRH + 5);
        assertThat(got.immediateData()).isEqualTo(c.queuePair().qpNumber());
        assertThat(got.sourceQp()).isEqualTo(c.queuePair().qpNumber());
        int slot = (int) (got.wrId() - 100);
        assertThat(text(server.mr.segment().asSlice((long) slot * SLOT + GRH, 5).toArray(JAVA_BYTE), 5))
                .isEqualTo("ping!");

        // server -> client: the reply's address handle from the receive and its GRH (ibv_create_ah_from_wc)
        AddressHandle reply = server.pd.createAddressHandle(got, server.mr.segment().asSlice((long) slot * SLOT, GRH), 1);
        closing(reply);
        assertThat(reply.attributes().global()).isTrue();
        assertThat(reply.attributes().dgid().ipv4().map(InetAddress.class::cast)).contains(addr.getAddress());
        server.mr.segment().asSlice(0, 5).copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes("pong!")));
        try (SendBatch b = new SendBatch(1, 1)) {
            s.queuePair().post(b.send(2, server.mr, 0, 5).to(new UdDestination(reply, got.sourceQp(), CmDatagram.QKEY)));
        }
        assertThat(server.await(1).get(0).isSuccess()).isTrue();
        WorkCompletion back = client.await(1).get(0);
        assertThat(back.sourceQp()).isEqualTo(s.queuePair().qpNumber());
        int cslot = (int) (back.wrId() - 100);
        assertThat(text(client.mr.segment().asSlice((long) cslot * SLOT + GRH, 5).toArray(JAVA_BYTE), 5))
                .isEqualTo("pong!");

        // the address handles are the datagram's: closing it closes the peer's handle
        c.close();
        assertThat(peer.addressHandle().isClosed()).isTrue();
        assertThat(c.queuePair().isClosed()).isTrue();
        assertThatThrownBy(c::localAddress).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRejectedResolutionIsUnreachableWithTheSidrStatus() throws Exception {
        InetSocketAddress addr = someAddress();
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        CmListener listener = closing(CmListener.listen(channel, addr, 4, CmPortSpace.UDP));
        CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
        CompletableFuture<CmDatagram> connecting = CmDatagram.connectAsync(channel, null, addr,
                setup(new Side(), 0), new byte[0], RESOLVE, WHOLE);
        CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
        assertThatThrownBy(() -> r.reject(new byte[CmDatagram.ACCEPT_PRIVATE_DATA + 1]))
                .isInstanceOf(IllegalArgumentException.class);
        r.reject(bytes("no"));
        assertThatThrownBy(() -> connecting.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(CmException.class, e -> {
                    assertThat(e.event()).isEqualTo(CmEventType.UNREACHABLE);
                    assertThat(e.status()).isPositive(); // the SIDR reply's status (IB_SIDR_REJECT)
                });
        // the refused attempt destroyed its id: the channel closes once the listener does
        listener.close();
        channel.close();
    }

    @Test
    void aSetupThatIsNotUdAndOversizedPrivateDataAreRefused() throws Exception {
        InetSocketAddress addr = someAddress();
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        CmListener listener = closing(CmListener.listen(channel, addr, 4, CmPortSpace.UDP));
        assertThatThrownBy(() -> CmDatagram.connectAsync(channel, null, addr, setup(new Side(), 0),
                new byte[CmDatagram.CONNECT_PRIVATE_DATA + 1], RESOLVE, WHOLE).get(T, TimeUnit.SECONDS))
                .cause().isInstanceOf(IllegalArgumentException.class);
        Side rc = new Side();
        ConnectionSetup notUd = ctx -> {
            rc.pd = ctx.allocateProtectionDomain();
            rc.cq = ctx.createCompletionQueue(4);
            synchronized (sides) {
                sides.add(0, rc);
            }
            return QueuePair.builder(rc.pd, QpType.RC).completionQueue(rc.cq).capacity(4, 4);
        };
        CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
        assertThatThrownBy(() -> CmDatagram.connectAsync(channel, null, addr, notUd, new byte[0], RESOLVE, WHOLE)
                .get(T, TimeUnit.SECONDS)).cause().isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UD");
        assertThat(request).isNotDone(); // refused before rdma_connect
        listener.close();
        channel.close(); // nothing was left behind on the channel
    }

    @Test
    void multicastJoinSendReceiveAndLeave() throws Exception {
        InetAddress device = CmPair.deviceAddress();
        InetAddress group = InetAddress.getByName("239.7.7." + (1 + ThreadLocalRandom.current().nextInt(250)));
        InetSocketAddress source = new InetSocketAddress(device, 0);
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        Side rx = new Side();
        Side tx = new Side();
        CmDatagram receiver = closing(CmDatagram.openAsync(channel, source, group, setup(rx, 8), RESOLVE, WHOLE)
                .get(T, TimeUnit.SECONDS));
        CmDatagram sender = closing(CmDatagram.openAsync(channel, source, group, setup(tx, 0), RESOLVE, WHOLE)
                .get(T, TimeUnit.SECONDS));
        assertThat(receiver.peer()).isEmpty();
        assertThatThrownBy(() -> receiver.joinMulticastAsync(device, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a multicast address");

        MulticastGroup in = receiver.joinMulticastAsync(group, false).get(T, TimeUnit.SECONDS);
        MulticastGroup out = sender.joinMulticastAsync(group, true).get(T, TimeUnit.SECONDS);
        assertThat(out.isSendOnly()).isTrue();
        assertThat(in.destination().qpNumber()).isEqualTo(UdDestination.MULTICAST_QPN);
        assertThat(out.destination().qkey()).isEqualTo(in.destination().qkey());
        assertThat(out.destination().addressHandle().attributes().dgid().ipv4().map(InetAddress.class::cast)).contains(group);

        int n = 5;
        try (SendBatch b = new SendBatch(1, 1)) {
            for (int i = 0; i < n; i++) {
                tx.mr.segment().set(JAVA_BYTE, i, (byte) ('a' + i));
                sender.queuePair().post(b.clear().sendWithImmediate(i, tx.mr, i, 1, sender.queuePair().qpNumber())
                        .to(out.destination()));
                assertThat(tx.await(1).get(0).isSuccess()).isTrue(); // sent before the next: none lost in flight
            }
        }
        List<WorkCompletion> got = rx.await(n);
        StringBuilder payload = new StringBuilder();
        for (WorkCompletion wc : got) {
            assertThat(wc.isSuccess()).isTrue();
            assertThat(wc.sourceQp()).isEqualTo(sender.queuePair().qpNumber());
            assertThat(wc.immediateData()).isEqualTo(sender.queuePair().qpNumber());
            assertThat(wc.byteLength()).isEqualTo(GRH + 1);
            payload.append((char) rx.mr.segment().get(JAVA_BYTE, (wc.wrId() - 100) * SLOT + GRH));
        }
        assertThat(payload.toString()).isEqualTo("abcde");

        // left: the receiver's queue pair is detached, the next datagram reaches nobody
        in.close();
        in.close(); // idempotent
        assertThatThrownBy(in::destination).isInstanceOf(IllegalStateException.class).hasMessageContaining("left");
        try (SendBatch b = new SendBatch(1, 1)) {
            sender.queuePair().post(b.sendWithImmediate(9, tx.mr, 0, 1, 0).to(out.destination()));
            assertThat(tx.await(1).get(0).isSuccess()).isTrue();
        }
        rx.assertQuiet(2000);

        // the datagram's close closes the groups' address handles and leaves those still joined
        sender.close();
        assertThat(out.destination().addressHandle().isClosed()).isTrue();
        assertThatThrownBy(() -> sender.joinMulticastAsync(group, false)).isInstanceOf(IllegalStateException.class);
    }

    /** Runs a task on the engine thread and waits for it: whatever the thread was handling is done. */
    private static void awaitEngine(CompletionEngine engine) throws Exception {
        CompletableFuture<Void> turn = new CompletableFuture<>();
        engine.execute(() -> turn.complete(null));
        turn.get(T, TimeUnit.SECONDS);
    }

    /** Closes a side's region, CQ and PD: the PD refuses while an address handle made on it is still open. */
    private static void closeSide(Side s) throws Exception {
        s.mr.close();
        s.cq.close();
        s.pd.close();
    }

    /**
     * A join still pending when its datagram closed never completed: {@code rdma_destroy_id} drops the
     * MULTICAST_JOIN event not yet read, so nothing was left to complete the future, and a caller waiting on it
     * without a timeout hung. The engine thread is held so that the event is still unread when the datagram closes.
     */
    @Test
    void aJoinStillPendingWhenTheDatagramClosesFails() throws Exception {
        InetAddress group = InetAddress.getByName("239.7.8." + (1 + ThreadLocalRandom.current().nextInt(250)));
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        Side side = new Side();
        CmDatagram d = closing(CmDatagram.openAsync(channel, new InetSocketAddress(CmPair.deviceAddress(), 0), group,
                setup(side, 4), RESOLVE, WHOLE).get(T, TimeUnit.SECONDS));
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.execute(() -> {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<MulticastGroup> join;
        try {
            held.await();
            join = d.joinMulticastAsync(group, false);
            d.close();
        } finally {
            release.countDown();
        }
        assertThat(join).as("the join's future once its datagram is closed").isDone();
        assertThatThrownBy(() -> join.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        awaitEngine(engine);
        closeSide(side);
        channel.close();
    }

    /**
     * A MULTICAST_JOIN handled on the engine thread while another thread closed the datagram made the group's
     * address handle after the close had closed the groups' handles: it stayed open, and the PD could not close.
     * Now the handle is made as a counted call on the id: a close waits for it and closes it, or refuses it. Many
     * rounds of a join and a close at once, some microseconds apart; each round's PD must close.
     */
    @Test
    void aJoinHandledAsItsDatagramClosesLeavesNoAddressHandleOpen() throws Exception {
        InetAddress device = CmPair.deviceAddress();
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int joined = 0;
        int refused = 0;
        for (int round = 0; round < 60; round++) {
            Side side = new Side();
            List<InetAddress> groups = new ArrayList<>();
            for (int g = 0; g < 4; g++) {
                groups.add(InetAddress.getByName("239.7.9." + (1 + random.nextInt(250))));
            }
            CmDatagram d = CmDatagram.openAsync(channel, new InetSocketAddress(device, 0), groups.get(0),
                    setup(side, 0), RESOLVE, WHOLE).get(T, TimeUnit.SECONDS);
            List<CompletableFuture<MulticastGroup>> joins = new ArrayList<>();
            for (InetAddress g : groups) {
                joins.add(d.joinMulticastAsync(g, random.nextBoolean()));
            }
            long until = System.nanoTime() + random.nextLong(2_000_000); // up to 2 ms: the events' arrival
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            d.close();
            awaitEngine(engine); // an event read before the close is handled by now
            for (CompletableFuture<MulticastGroup> j : joins) {
                assertThat(j).as("round %d: a join's future once its datagram is closed", round).isDone();
                if (j.isCompletedExceptionally()) {
                    refused++;
                    assertThatThrownBy(j::join).cause().isInstanceOf(IllegalStateException.class);
                } else {
                    joined++;
                    assertThat(j.join().destination().addressHandle().isClosed())
                            .as("round %d: a joined group's handle after its datagram closed", round).isTrue();
                }
            }
            closeSide(side); // refused if an address handle made on the PD were still open
        }
        System.out.printf("join and close at once: %d joined first, %d refused%n", joined, refused);
        channel.close();
    }

    /**
     * librdmacm attaches a full member's queue pair to the group ({@code ibv_attach_mcast}), and the kernel refuses
     * to destroy a queue pair that has attachments ({@code EBUSY}), which {@code rdma_destroy_qp} ignores: a datagram
     * closed with such a group still joined, or whose queue pair was closed directly, left its queue pair in the
     * kernel, and the CQ and PD under it could not be destroyed. The queue pair's close now leaves the groups first;
     * the group's own close after it has nothing left to do.
     */
    @Test
    void aQueuePairClosedWithAFullMembersGroupStillJoinedIsDestroyed() throws Exception {
        InetAddress device = CmPair.deviceAddress();
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        for (String how : new String[] {"the datagram's close", "the queue pair's own close"}) {
            InetAddress group = InetAddress.getByName("239.7.10." + (1 + ThreadLocalRandom.current().nextInt(250)));
            Side side = new Side();
            CmDatagram d = CmDatagram.openAsync(channel, new InetSocketAddress(device, 0), group, setup(side, 4),
                    RESOLVE, WHOLE).get(T, TimeUnit.SECONDS);
            MulticastGroup full = d.joinMulticastAsync(group, false).get(T, TimeUnit.SECONDS);
            boolean direct = how.equals("the queue pair's own close");
            if (direct) {
                d.queuePair().close();
            } else {
                d.close();
            }
            side.mr.close();
            assertThatCode(side.cq::close).as("the CQ after %s", how).doesNotThrowAnyException();
            if (direct) {
                assertThatThrownBy(() -> d.joinMulticastAsync(group, false)).as(how)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("queue pair");
                assertThatCode(full::close).as("leaving after %s", how).doesNotThrowAnyException();
                d.close();
            } else {
                assertThatCode(full::close).as("leaving after %s", how).doesNotThrowAnyException();
            }
            assertThatThrownBy(full::destination).isInstanceOf(IllegalStateException.class);
            side.pd.close();
        }
        channel.close();
    }

    /**
     * Found by {@link CmDatagramMisuseDeviceTest}: a datagram's close racing a close of its queue pair on another
     * thread. The queue pair's close marks it closed before it destroys it, so the datagram's close found it closed,
     * went on and destroyed the id; the other thread's {@code rdma_destroy_qp} then found the id destroyed and
     * failed: the queue pair stayed in the kernel, its posted receives pinned the region, its CQ could not be
     * destroyed. The datagram's close now waits for that destruction before destroying the id. Rounds of both closes
     * at once; each round's region, CQ and PD must close.
     */
    @Test
    void aDatagramsCloseRacingItsQueuePairsCloseDestroysTheQueuePair() throws Exception {
        InetAddress device = CmPair.deviceAddress();
        InetAddress group = InetAddress.getByName("239.7.11." + (1 + ThreadLocalRandom.current().nextInt(250)));
        CompletionEngine engine = closing(CompletionEngine.builder().mode(PollingMode.EVENT).build());
        CmEventChannel channel = closing(CmEventChannel.create(engine));
        for (int round = 0; round < 100; round++) {
            Side side = new Side();
            CmDatagram d = CmDatagram.openAsync(channel, new InetSocketAddress(device, 0), group, setup(side, 4),
                    RESOLVE, WHOLE).get(T, TimeUnit.SECONDS);
            QueuePair qp = d.queuePair();
            CountDownLatch go = new CountDownLatch(1);
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
            d.close();
            other.join(TimeUnit.SECONDS.toMillis(T));
            assertThat(direct).as("round %d: the queue pair's own close", round).isCompletedWithValue("closed");
            assertThatCode(() -> closeSide(side)).as("round %d: the region, CQ and PD", round)
                    .doesNotThrowAnyException();
        }
        channel.close();
    }
}
