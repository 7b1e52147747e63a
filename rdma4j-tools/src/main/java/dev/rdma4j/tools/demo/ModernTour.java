package dev.rdma4j.tools.demo;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.MemoryWindow;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.CmDatagram;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.ConnectionSetup;
import dev.rdma4j.connect.MulticastGroup;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The demo's part on what modern RDMA code uses beyond the classic verbs: a memory window that lends a peer a
 * sub-range of a region and takes it back, and multicast over rdma_cm (UD queue pairs on rdma_cm ids).
 *
 * <p>Threading: runs on the demo's thread; rdma_cm events on the engine's.
 */
final class ModernTour {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long T = 120;
    private static final int GRH = QueuePair.UD_GRH_BYTES;

    private final Context ctx;
    private final Inet4Address address;
    private final Narrator narrator;

    ModernTour(Context ctx, Inet4Address address, PrintStream out) {
        this.ctx = ctx;
        this.address = address;
        this.narrator = new Narrator(out);
    }

    boolean run() throws Exception {
        window();
        if (address != null) {
            multicast();
        }
        return narrator.allVerified();
    }

    /** Step 22: bob's region grants nothing remotely; a type 2 window lends 64 bytes of it, then is invalidated. */
    private void window() throws VerbsException {
        try (ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue aliceCq = ctx.createCompletionQueue(8);
                CompletionQueue bobCq = ctx.createCompletionQueue(8);
                MemoryRegion aliceMem = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                MemoryRegion bobMem = pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.MW_BIND);
                QueuePair alice = QueuePair.builder(pd, QpType.RC).completionQueue(aliceCq).build();
                QueuePair bob = QueuePair.builder(pd, QpType.RC).completionQueue(bobCq).build();
                MemoryWindow window = pd.allocateWindow(MemoryWindow.Type.TYPE_2);
                SendBatch batch = new SendBatch(1, 1); WorkCompletions wcs = new WorkCompletions(4)) {
            alice.toInit();
            bob.toInit();
            QpEndpoint a = alice.localEndpoint(0x11);
            QpEndpoint b = bob.localEndpoint(0x22);
            alice.connect(b, a.psn());
            bob.connect(a, b.psn());
            narrator.step("22. A memory window: bob lends alice 64 bytes of a region that grants no remote access,"
                    + " then takes them back", "ibv_alloc_mw (type 2), a bind work request (IBV_WR_BIND_MW), "
                    + "local invalidate (IBV_WR_LOCAL_INV)");
            bob.post(batch.clear().bindWindow(1, window, bobMem, 1024, 64, AccessFlag.REMOTE_WRITE));
            await(bobCq, wcs);
            narrator.say("bob's region rkey 0x" + Integer.toHexString(bobMem.rkey()) + " grants nothing; the window's"
                    + " rkey 0x" + Integer.toHexString(window.rkey()) + " grants writes to bytes 1024..1087");
            byte[] note = "written through bob's window".getBytes(StandardCharsets.US_ASCII);
            Narrator.put(aliceMem, 0, note);
            alice.post(batch.clear().write(2, aliceMem, 0, note.length, window.remote(), 0));
            WorkCompletion w = await(aliceCq, wcs);
            narrator.verify("alice's write through the window landed in bob's bytes 1024.. (" + w.status() + ")",
                    w.isSuccess() && Arrays.equals(Narrator.get(bobMem, 1024, note.length), note));
            bob.post(batch.clear().localInvalidate(3, window));
            await(bobCq, wcs);
            Narrator.put(aliceMem, 0, "this must not land".getBytes(StandardCharsets.US_ASCII));
            alice.post(batch.clear().write(4, aliceMem, 0, 18, window.remote(), 0));
            WorkCompletion refused = await(aliceCq, wcs);
            narrator.verify("after bob's invalidate, alice's next write is refused (" + refused.status()
                    + ") and bob's bytes are unchanged", refused.status() == WcStatus.REM_ACCESS_ERR
                    && Arrays.equals(Narrator.get(bobMem, 1024, note.length), note));
        }
    }

    /** Step 23: two UD queue pairs on rdma_cm ids join a multicast group; alice sends to it, bob receives. */
    private void multicast() throws Exception {
        InetAddress group = InetAddress.getByName("239.255.7.4");
        InetSocketAddress source = new InetSocketAddress(address, 0);
        List<AutoCloseable> owned = new ArrayList<>();
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            CompletionQueue[] cqs = new CompletionQueue[2];
            MemoryRegion[] mems = new MemoryRegion[2];
            try {
                CmDatagram alice = CmDatagram.openAsync(channel, source, group, setup(owned, cqs, mems, 0), TIMEOUT,
                        TIMEOUT).get(T, TimeUnit.SECONDS);
                owned.add(0, alice);
                CmDatagram bob = CmDatagram.openAsync(channel, source, group, setup(owned, cqs, mems, 1), TIMEOUT,
                        TIMEOUT).get(T, TimeUnit.SECONDS);
                owned.add(0, bob);
                narrator.step("23. Multicast over rdma_cm: alice and bob each resolve " + group.getHostAddress()
                        + " (rdma_resolve_addr) and join it (rdma_join_multicast_ex)", "UD queue pairs #"
                        + alice.queuePair().qpNumber() + " (alice, send-only member) and #" + bob.queuePair().qpNumber()
                        + " (bob, full member)");
                MulticastGroup out = alice.joinMulticastAsync(group, true).get(T, TimeUnit.SECONDS);
                MulticastGroup in = bob.joinMulticastAsync(group, false).get(T, TimeUnit.SECONDS);
                narrator.say("the group's destination: QPN 0x" + Integer.toHexString(out.destination().qpNumber())
                        + ", Q_Key 0x" + Integer.toHexString(out.destination().qkey()) + ", GID "
                        + out.destination().addressHandle().attributes().dgid());
                byte[] hello = "hello, group".getBytes(StandardCharsets.US_ASCII);
                Narrator.put(mems[0], 0, hello);
                try (SendBatch b = new SendBatch(1, 1); WorkCompletions wcs = new WorkCompletions(4)) {
                    alice.queuePair().post(b.sendWithImmediate(1, mems[0], 0, hello.length, alice.queuePair()
                            .qpNumber()).to(out.destination()));
                    await(cqs[0], wcs);
                    WorkCompletion got = await(cqs[1], wcs);
                    narrator.verify("bob received \"" + new String(Narrator.get(mems[1], GRH, hello.length),
                            StandardCharsets.US_ASCII) + "\" from alice's QP #" + got.sourceQp() + " through the group",
                            got.sourceQp() == alice.queuePair().qpNumber() && got.byteLength() == GRH + hello.length
                                    && Arrays.equals(Narrator.get(mems[1], GRH, hello.length), hello));
                }
                in.close();
                out.close();
                narrator.say("both left the group (rdma_leave_multicast)");
            } finally {
                for (AutoCloseable c : owned) {
                    c.close();
                }
            }
        }
    }

    /** A UD setup on the id's device: PD, CQ and region recorded for the tour; bob posts one receive. */
    private static ConnectionSetup setup(List<AutoCloseable> owned, CompletionQueue[] cqs, MemoryRegion[] mems,
            int who) {
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context c) throws VerbsException {
                ProtectionDomain pd = c.allocateProtectionDomain();
                owned.add(0, pd);
                cqs[who] = c.createCompletionQueue(4);
                owned.add(0, cqs[who]);
                mems[who] = pd.allocate(GRH + 256, AccessFlag.LOCAL_WRITE);
                owned.add(0, mems[who]);
                return QueuePair.builder(pd, QpType.UD).completionQueue(cqs[who]).capacity(4, 4);
            }

            @Override
            public void beforeConnect(QueuePair qp) throws VerbsException {
                if (who == 1) {
                    qp.postReceive(9, mems[who], 0, GRH + 256);
                }
            }
        };
    }

    /** The next completion, failed ones included (a refused write is one the tour shows). */
    private static WorkCompletion await(CompletionQueue cq, WorkCompletions wcs) throws VerbsException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no completion within " + TIMEOUT);
            }
            Thread.onSpinWait();
        }
        return wcs.get(0);
    }
}
