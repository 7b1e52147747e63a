package dev.rdma4j.tools.demo;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.EndpointExchange;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The demo's data-path part: two RC queue pairs ("alice" and "bob") on one device, connected through
 * the out-of-band TCP exchange, then every operation once with the data checked on the other side.
 */
final class DataPathTour {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
        AccessFlag.REMOTE_ATOMIC};

    private final Context ctx;
    private final int port;
    private final Narrator narrator;

    DataPathTour(Context ctx, int port, PrintStream out) {
        this.ctx = ctx;
        this.port = port;
        this.narrator = new Narrator(out);
    }

    boolean run() throws VerbsException, IOException {
        try (ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue aliceCq = ctx.createCompletionQueue(16);
                CompletionQueue bobCq = ctx.createCompletionQueue(16);
                MemoryRegion aliceMem = pd.allocate(64 * 1024, ALL); MemoryRegion bobMem = pd.allocate(64 * 1024, ALL);
                QueuePair alice = QueuePair.builder(pd, QpType.RC).completionQueue(aliceCq).build();
                QueuePair bob = QueuePair.builder(pd, QpType.RC).completionQueue(bobCq).build();
                SendBatch batch = new SendBatch(1, 1); WorkCompletions wcs = new WorkCompletions(4)) {
            narrator.step("7. Protection domain, two 64 KiB registered regions, two CQs, two RC queue pairs",
                    "alice QP #" + alice.qpNumber() + ", bob QP #" + bob.qpNumber() + "; region keys lkey/rkey 0x"
                            + Integer.toHexString(aliceMem.lkey()) + "/0x" + Integer.toHexString(aliceMem.rkey()));

            alice.toInit();
            bob.toInit();
            RemoteRegion bobsRegion = exchange(alice.localEndpoint(0x1234), aliceMem, bob.localEndpoint(0x5678),
                    bobMem, alice, bob);

            narrator.step("9. Send / receive", "bob posts a receive, alice sends");
            byte[] hello = "hello bob, this is alice over RDMA".getBytes(StandardCharsets.US_ASCII);
            Narrator.put(aliceMem, 0, hello);
            bob.postReceive(1, bobMem, 0, 256);
            alice.postSend(2, aliceMem, 0, hello.length);
            WorkCompletion recv = await(bobCq, wcs);
            await(aliceCq, wcs);
            narrator.verify("bob received " + recv.byteLength() + " bytes: \"" + new String(Narrator.get(bobMem, 0,
                    recv.byteLength()), StandardCharsets.US_ASCII) + "\"", recv.opcode() == WcOpcode.RECV
                    && Arrays.equals(Narrator.get(bobMem, 0, hello.length), hello));

            narrator.step("10. RDMA write", "alice writes 4096 bytes straight into bob's region; bob's CPU is not involved");
            for (int i = 0; i < 4096; i++) {
                aliceMem.segment().set(JAVA_BYTE, 4096 + i, (byte) (i * 7));
            }
            alice.post(batch.clear().write(3, aliceMem, 4096, 4096, bobsRegion, 8192));
            await(aliceCq, wcs);
            narrator.verify("bob's bytes 8192..12287 equal alice's pattern", Arrays.equals(Narrator.get(bobMem, 8192,
                    4096), Narrator.get(aliceMem, 4096, 4096)));

            narrator.step("11. RDMA read", "alice reads 1000 bytes of bob's region into her own");
            for (int i = 0; i < 1000; i++) {
                bobMem.segment().set(JAVA_BYTE, 20_000 + i, (byte) (255 - i));
            }
            alice.post(batch.clear().read(4, aliceMem, 30_000, 1000, bobsRegion, 20_000));
            WorkCompletion read = await(aliceCq, wcs);
            narrator.verify("alice now holds bob's 1000 bytes (" + read.opcode() + ")", Arrays.equals(
                    Narrator.get(aliceMem, 30_000, 1000), Narrator.get(bobMem, 20_000, 1000)));

            narrator.step("12. RDMA write with immediate", "the write also consumes one of bob's receives, carrying 32 bits");
            bob.postReceive(5, bobMem, 0, 0);
            alice.post(batch.clear().writeWithImmediate(6, aliceMem, 0, hello.length, bobsRegion, 40_000, 0x0BADCAFE));
            WorkCompletion imm = await(bobCq, wcs);
            await(aliceCq, wcs);
            narrator.verify("bob's completion: " + imm.opcode() + ", immediate 0x" + Integer.toHexString(imm.immediateData())
                    + ", data in place", imm.opcode() == WcOpcode.RECV_RDMA_WITH_IMM && imm.hasImmediate()
                    && imm.immediateData() == 0x0BADCAFE
                    && Arrays.equals(Narrator.get(bobMem, 40_000, hello.length), hello));

            narrator.step("13. Atomics", "on an 8-byte counter in bob's region, starting at 40");
            bobMem.segment().set(JAVA_LONG, 50_000, 40L);
            alice.post(batch.clear().fetchAndAdd(7, aliceMem, 50_000, bobsRegion, 50_000, 2));
            await(aliceCq, wcs);
            long old = aliceMem.segment().get(JAVA_LONG, 50_000);
            narrator.verify("fetch-and-add 2: alice got the old value " + old + ", bob's counter is now "
                    + bobMem.segment().get(JAVA_LONG, 50_000), old == 40 && bobMem.segment().get(JAVA_LONG, 50_000) == 42);
            alice.post(batch.clear().compareAndSwap(8, aliceMem, 50_008, bobsRegion, 50_000, 42, 100));
            await(aliceCq, wcs);
            old = aliceMem.segment().get(JAVA_LONG, 50_008);
            narrator.verify("compare-and-swap 42 -> 100: old value " + old + ", counter now "
                    + bobMem.segment().get(JAVA_LONG, 50_000), old == 42 && bobMem.segment().get(JAVA_LONG, 50_000) == 100);
        }
        return narrator.allVerified();
    }

    /** Step 8: each side offers its endpoint and region over TCP on loopback, then both connect. */
    private RemoteRegion exchange(QpEndpoint aliceEp, MemoryRegion aliceMem, QpEndpoint bobEp, MemoryRegion bobMem,
            QueuePair alice, QueuePair bob) throws IOException, VerbsException {
        EndpointExchange.Offer bobsOffer;
        EndpointExchange.Offer alicesOffer;
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<EndpointExchange.Offer> atBob = CompletableFuture.supplyAsync(() -> {
                try {
                    return EndpointExchange.accept(server, EndpointExchange.Offer.of(bobEp, bobMem.remote()), TIMEOUT);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            bobsOffer = EndpointExchange.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    server.getLocalPort()), EndpointExchange.Offer.of(aliceEp, aliceMem.remote()), TIMEOUT);
            alicesOffer = atBob.join();
        }
        narrator.step("8. Out-of-band exchange over TCP (EndpointExchange), then RESET -> INIT -> RTR -> RTS",
                "alice learned bob's " + describe(bobsOffer.endpoint()) + ", region rkey 0x"
                        + Integer.toHexString(bobsOffer.regions().get(0).rkey()));
        narrator.say("bob learned alice's " + describe(alicesOffer.endpoint()));
        alice.connect(bobsOffer.endpoint(), aliceEp.psn());
        bob.connect(alicesOffer.endpoint(), bobEp.psn());
        narrator.say("alice: " + alice.query().state() + ", path MTU " + alice.query().pathMtu().bytes() + "; bob: "
                + bob.query().state());
        return bobsOffer.regions().get(0);
    }

    private static String describe(QpEndpoint e) {
        return String.format("QPN 0x%06x, PSN 0x%06x, GID %s", e.qpn(), e.psn(), e.gid());
    }

    private WorkCompletion await(CompletionQueue cq, WorkCompletions wcs) throws VerbsException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no completion within " + TIMEOUT);
            }
            Thread.onSpinWait();
        }
        WorkCompletion c = wcs.get(0);
        if (!c.isSuccess()) {
            throw new IllegalStateException("work request " + c.wrId() + " failed: " + c.status() + " ("
                    + c.status().text() + ")");
        }
        return c;
    }



}
