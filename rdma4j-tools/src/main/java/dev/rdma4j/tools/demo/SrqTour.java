package dev.rdma4j.tools.demo;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.AsyncEventType;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demo's SRQ part: N server-side connections that must each absorb a burst of M messages. With a
 * receive queue per connection that takes N×M posted receives and their buffers; with one shared
 * receive queue K×M; both measured from what is actually registered and posted. Then the burst itself
 * through an SRQ smaller than the burst, kept topped up by the SRQ-limit event.
 */
final class SrqTour {
    private static final int N = 16;
    private static final int M = 8;
    private static final int K = 2;
    private static final int SLOT = 256;
    private static final long T = 120;

    private final Context ctx;
    private final Narrator narrator;

    SrqTour(Context ctx, PrintStream out) {
        this.ctx = ctx;
        this.narrator = new Narrator(out);
    }

    boolean run() throws Exception {
        narrator.step("20. Shared receive queue: " + N + " connections, each may see a burst of " + M + " messages",
                "measured: registered receive bytes and posted receives, private receive queues vs one SRQ");
        try (ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue cq = ctx.createCompletionQueue(1024)) {
            long privateBytes;
            int privatePosted;
            List<QueuePair> qps = new ArrayList<>();
            try (MemoryRegion pool = pd.allocate((long) N * M * SLOT, AccessFlag.LOCAL_WRITE);
                    ReceiveBatch rb = new ReceiveBatch(M, 1)) {
                for (int q = 0; q < N; q++) {
                    QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(1, M).build();
                    qps.add(qp);
                    qp.toInit();
                    rb.clear();
                    for (int i = 0; i < M; i++) {
                        rb.receive(i, pool, ((long) q * M + i) * SLOT, SLOT);
                    }
                    qp.post(rb);
                }
                privateBytes = pool.length();
                privatePosted = qps.stream().mapToInt(QueuePair::outstandingReceives).sum();
                qps.forEach(QueuePair::close); // before the pool: their posted receives pin it
            } finally {
                qps.forEach(QueuePair::close);
            }
            long srqBytes;
            int srqPosted;
            try (MemoryRegion pool = pd.allocate((long) K * M * SLOT, AccessFlag.LOCAL_WRITE);
                    SharedReceiveQueue srq = pd.createSharedReceiveQueue(K * M, 1, 0)) {
                for (int i = 0; i < K * M; i++) {
                    srq.postReceive(i, pool, (long) i * SLOT, SLOT);
                }
                srqBytes = pool.length();
                srqPosted = srq.outstanding();
            }
            narrator.say(String.format("private receive queues: %d receives posted, %d bytes registered (N x M)",
                    privatePosted, privateBytes));
            narrator.say(String.format("one SRQ (K = %d):        %d receives posted, %d bytes registered (K x M)", K,
                    srqPosted, srqBytes));
            narrator.verify(String.format("the SRQ needs %d times less receive memory here", privateBytes / srqBytes),
                    privatePosted == N * M && srqPosted == K * M && privateBytes == (long) N * M * SLOT);
        }
        return burst() && narrator.allVerified();
    }

    /** N senders burst M messages each into N receivers sharing one SRQ of K×M, refilled on the limit event. */
    private boolean burst() throws Exception {
        narrator.step("21. The burst through one SRQ of " + K * M + " receives, refilled when fewer than " + M + " remain",
                N + " x " + M + " = " + N * M + " messages; the SRQ-limit event (ibv_modify_srq arm) tops it up");
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue sendCq = ctx.createCompletionQueue(N * M + 16);
                CompletionQueue recvCq = ctx.createCompletionQueue(N * M + 16);
                MemoryRegion pool = pd.allocate((long) N * M * SLOT, AccessFlag.LOCAL_WRITE);
                MemoryRegion src = pd.allocate((long) N * 64, AccessFlag.LOCAL_WRITE);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(K * M, 1, 0);
                WorkCompletions wcs = new WorkCompletions(64)) {
            engine.watchAsyncEvents(ctx);
            AtomicInteger nextSlot = new AtomicInteger();
            AtomicInteger limitEvents = new AtomicInteger();
            srq.addEventListener(e -> {
                if (e.type() == AsyncEventType.SRQ_LIMIT_REACHED) {
                    limitEvents.incrementAndGet();
                }
            });
            // Tops the pool up to K x M from the slots polling has freed; called on the limit event (engine
            // thread) and after each poll, since a slot is free only once its completion was polled.
            SharedReceiveQueue.RefillAction topUp = s -> {
                synchronized (nextSlot) {
                    while (s.outstanding() < K * M && nextSlot.get() < N * M) {
                        int slot = nextSlot.getAndIncrement();
                        s.postReceive(slot, pool, (long) slot * SLOT, SLOT);
                    }
                }
            };
            topUp.refill(srq);
            srq.refillOnLimit(M, topUp);
            List<QueuePair> all = new ArrayList<>();
            int[] senderOf = new int[1 << 24];
            try {
                List<QueuePair> senders = new ArrayList<>();
                for (int q = 0; q < N; q++) {
                    QueuePair a = QueuePair.builder(pd, QpType.RC).completionQueue(sendCq).capacity(M, 1).build();
                    QueuePair b = QueuePair.builder(pd, QpType.RC).sendCompletionQueue(sendCq)
                            .receiveCompletionQueue(recvCq).capacity(1, 0).sharedReceiveQueue(srq).build();
                    all.add(a);
                    all.add(b);
                    QpEndpoint ea = a.localEndpoint(q);
                    QpEndpoint eb = b.localEndpoint(q + 1000);
                    a.connect(eb, q);
                    b.connect(ea, q + 1000);
                    senders.add(a);
                    senderOf[b.qpNumber()] = q;
                    src.segment().set(JAVA_INT, q * 64L, q);
                }
                for (int q = 0; q < N; q++) {
                    for (int i = 0; i < M; i++) {
                        senders.get(q).postSend(i, src, q * 64L, 4);
                    }
                }
                int received = 0;
                boolean attributed = true;
                long deadline = System.nanoTime() + T * 1_000_000_000L;
                while (received < N * M && System.nanoTime() < deadline) {
                    int n = recvCq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        attributed &= wcs.isSuccess(i)
                                && wcs.buffer(i).get(JAVA_INT, 0) == senderOf[wcs.qpNumber(i)];
                    }
                    received += n;
                    if (n > 0) {
                        topUp.refill(srq);
                    }
                    while (sendCq.poll(wcs) > 0) {
                        // send completions: nothing to check beyond their arrival
                    }
                }
                // The limit event comes through the async fd, the completions through the CQ: the engine may not
                // have dispatched the last event yet. processAsyncEvents() returns once every event raised before
                // it has been delivered (by this thread or the engine), so the count below is final.
                ctx.processAsyncEvents();
                int rearmed = srq.query().limit();
                narrator.verify(received + " messages received through " + K * M + " SRQ receives, each from the QP the "
                        + "completion names; the limit event fired " + limitEvents.get() + " time(s), each refilling "
                        + "the pool and re-arming the limit (now " + rearmed + ")",
                        received == N * M && attributed && limitEvents.get() > 0 && rearmed == M);
                all.forEach(QueuePair::close);
            } finally {
                all.forEach(QueuePair::close);
            }
        }
        return narrator.allVerified();
    }


}
