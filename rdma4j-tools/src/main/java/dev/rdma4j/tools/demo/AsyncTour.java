package dev.rdma4j.tools.demo;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.connect.ConnectionSetup;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The demo's asynchronous part: a completion engine in event mode (epoll, no spinning), an rdma_cm
 * connection between a listener and a client with private data both ways, then the operations as
 * futures (several in flight at once), and a disconnect the other side sees.
 */
final class AsyncTour {
    private static final long T = 120;
    private static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
        AccessFlag.REMOTE_ATOMIC};

    private final InetAddress address;
    private final Narrator narrator;
    private final List<AutoCloseable> resources = new ArrayList<>();

    AsyncTour(InetAddress address, PrintStream out) {
        this.address = address;
        this.narrator = new Narrator(out);
    }

    boolean run() throws Exception {
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("demo-engine").build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            narrator.step("14. Completion engine (event mode) and an rdma_cm event channel",
                    "one platform thread sleeps in epoll_wait on the CQs' completion channels and the CM channel");
            InetSocketAddress listenAt = new InetSocketAddress(address, 7471);
            try (CmListener listener = CmListener.listen(channel, listenAt, 4)) {
                narrator.step("15. rdma_cm: bob listens on " + address.getHostAddress() + ":7471, alice connects",
                        "address and route resolution, rdma_create_qp, rdma_connect / rdma_accept, ESTABLISHED");
                CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
                CompletableFuture<CmConnection> aliceSide = CmConnection.connectAsync(channel, listenAt, setup(engine),
                        ascii("alice wants to talk"), Duration.ofSeconds(30));
                CmConnectionRequest r = request.get(T, TimeUnit.SECONDS);
                narrator.say("bob got a connection request with private data \"" + text(r.privateData(), 19) + "\"");
                CmConnection bob = r.acceptAsync(setup(engine), ascii("bob says hi")).get(T, TimeUnit.SECONDS);
                CmConnection alice = aliceSide.get(T, TimeUnit.SECONDS);
                try (bob; alice) {
                    narrator.verify("alice's queue pair #" + alice.queuePair().qpNumber() + " is " + alice.queuePair().state()
                            + ", connected to bob's #" + bob.queuePair().qpNumber() + "; alice read bob's private data \""
                            + text(alice.peerPrivateData(), 11) + "\"",
                            alice.queuePair().query().destQpNumber() == bob.queuePair().qpNumber()
                                    && text(alice.peerPrivateData(), 11).equals("bob says hi"));
                    operations(engine, alice, bob);
                }
            } finally {
                for (AutoCloseable c : resources) {
                    c.close();
                }
            }
        }
        return narrator.allVerified();
    }

    private void operations(CompletionEngine engine, CmConnection alice, CmConnection bob) throws Exception {
        AsyncQueuePair a = engine.wrap(alice.queuePair());
        AsyncQueuePair b = engine.wrap(bob.queuePair());
        ProtectionDomain apd = alice.queuePair().protectionDomain();
        ProtectionDomain bpd = bob.queuePair().protectionDomain();
        try (a; b; MemoryRegion am = apd.allocate(64 * 1024, ALL); MemoryRegion bm = bpd.allocate(64 * 1024, ALL)) {
            narrator.step("16. The operations as CompletableFutures, completed by the engine",
                    "a region is pinned while a request uses it; the futures carry the work completions");
            byte[] msg = ascii("sent asynchronously");
            CompletableFuture<WorkCompletion> recv = b.receiveAsync(bm, 0, 256);
            Narrator.put(am, 0, msg);
            a.sendAsync(am, 0, msg.length).get(T, TimeUnit.SECONDS);
            WorkCompletion got = recv.get(T, TimeUnit.SECONDS);
            narrator.verify("receive future: " + got.byteLength() + " bytes \"" + text(Narrator.get(bm, 0,
                    got.byteLength()), got.byteLength()) + "\"", Arrays.equals(Narrator.get(bm, 0,
                    msg.length), msg));

            RemoteRegion remote = bm.remote(); // in real life it travels in a message; here both sides are local
            List<CompletableFuture<WorkCompletion>> writes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                am.segment().asSlice(4096L * (i + 1), 4096).fill((byte) ('a' + i));
                writes.add(a.writeAsync(am, 4096L * (i + 1), 4096, remote, 4096L * (i + 1)));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
            boolean ok = true;
            for (int i = 0; i < 8; i++) {
                ok &= Arrays.equals(Narrator.get(bm, 4096L * (i + 1), 4096),
                        Narrator.get(am, 4096L * (i + 1), 4096));
            }
            narrator.verify("8 RDMA writes in flight at once, all completed, bob's 8 pages match", ok);

            bm.segment().asSlice(50_000, 100).fill((byte) 'z');
            a.readAsync(am, 50_000, 100, remote, 50_000).get(T, TimeUnit.SECONDS);
            narrator.verify("RDMA read future: alice holds bob's 100 bytes", Arrays.equals(Narrator.get(am, 50_000,
                    100), Narrator.get(bm, 50_000, 100)));

            bm.segment().set(JAVA_LONG, 60_000, 1);
            a.fetchAndAddAsync(am, 60_000, remote, 60_000, 41)
                    .thenCompose(wc -> a.compareAndSwapAsync(am, 60_008, remote, 60_000, 42, 7))
                    .get(T, TimeUnit.SECONDS);
            narrator.verify("fetch-and-add then compare-and-swap chained with thenCompose: old values "
                    + am.segment().get(JAVA_LONG, 60_000) + " and " + am.segment().get(JAVA_LONG, 60_008)
                    + ", counter now " + bm.segment().get(JAVA_LONG, 60_000),
                    am.segment().get(JAVA_LONG, 60_000) == 1 && am.segment().get(JAVA_LONG, 60_008) == 42
                            && bm.segment().get(JAVA_LONG, 60_000) == 7);

            narrator.step("17. Disconnect", "alice calls rdma_disconnect; bob's DISCONNECTED event completes a future");
            alice.disconnect();
            bob.disconnectedAsync().get(T, TimeUnit.SECONDS);
            narrator.verify("bob saw the disconnect; his queue pair is now " + bob.queuePair().query().state(),
                    bob.queuePair().query().state() == dev.rdma4j.QpState.ERROR);
        }
    }

    private ConnectionSetup setup(CompletionEngine engine) {
        return ctx -> {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = engine.createCompletionQueue(ctx, 32);
            synchronized (resources) {
                resources.add(0, pd);
                resources.add(0, cq);
            }
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(16, 16);
        };
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String text(byte[] b, int n) {
        return new String(Arrays.copyOf(b, Math.min(n, b.length)), StandardCharsets.US_ASCII);
    }




}
