package dev.rdma4j;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Shared receive queues on the device: limit event, query/modify, many QPs, refusals, errors. */
@Tag("device")
class SharedReceiveQueueDeviceTest {
    private static final AccessFlag[] RW = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE};

    /** A sender QP connected to a receiver QP that takes its receives from {@code srq}. */
    private static QueuePair[] pair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
            SharedReceiveQueue srq) throws VerbsException {
        QueuePair a = QueuePair.builder(pd, QpType.RC).completionQueue(sendCq).capacity(16, 1).build();
        QueuePair b = QueuePair.builder(pd, QpType.RC).sendCompletionQueue(sendCq).receiveCompletionQueue(recvCq)
                .capacity(1, 0).sharedReceiveQueue(srq).build();
        QpEndpoint ea = a.localEndpoint(1);
        QpEndpoint eb = b.localEndpoint(2);
        a.connect(eb, 1);
        b.connect(ea, 2);
        return new QueuePair[] {a, b};
    }

    private static List<WorkCompletion> await(CompletionQueue cq, WorkCompletions wcs, int n) throws VerbsException {
        List<WorkCompletion> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (out.size() < n) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                out.add(wcs.get(i));
            }
            if (got == 0) {
                assertThat(System.nanoTime()).as("%d completions, got %s", n, out).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        return out;
    }

    @Test
    void limitEventFiresOnceResetsTheLimitAndFiresAgainWhenRearmed() throws Exception {
        try (Context ctx = TestDevice.device().open();
                CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue scq = ctx.createCompletionQueue(64);
                CompletionQueue rcq = ctx.createCompletionQueue(64); MemoryRegion mr = pd.allocate(65536, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(10, 1, 0);
                WorkCompletions wcs = new WorkCompletions(16)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            srq.addEventListener(events::add);
            engine.watchAsyncEvents(ctx);
            QueuePair[] p = pair(pd, scq, rcq, srq);
            try {
                for (int i = 0; i < 10; i++) {
                    srq.postReceive(i, mr, i * 1024L, 1024);
                }
                srq.armLimit(7);
                assertThat(srq.query().limit()).isEqualTo(7);
                CompletableFuture<AsyncEvent> limit = srq.nextLimitEventAsync();
                for (int i = 0; i < 4; i++) {
                    p[0].postSend(100 + i, mr, 32_768, 64);
                }
                await(scq, wcs, 4);
                List<WorkCompletion> got = await(rcq, wcs, 4);
                assertThat(got).allMatch(WorkCompletion::isSuccess).allMatch(c -> c.qpNumber() == p[1].qpNumber());
                AsyncEvent e = limit.get(120, TimeUnit.SECONDS);
                assertThat(e.type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
                assertThat(e.sharedReceiveQueue()).isSameAs(srq);
                assertThat(events.poll(120, TimeUnit.SECONDS)).isSameAs(e);
                assertThat(events.poll(2, TimeUnit.SECONDS)).as("exactly one limit event").isNull();
                assertThat(srq.query().limit()).isZero();
                assertThat(srq.outstanding()).isEqualTo(6);

                srq.armLimit(7); // 6 remain: the next consumption crosses the limit again
                CompletableFuture<AsyncEvent> again = srq.nextLimitEventAsync();
                p[0].postSend(200, mr, 32_768, 64);
                await(scq, wcs, 1);
                await(rcq, wcs, 1);
                assertThat(again.get(120, TimeUnit.SECONDS).type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
                assertThat(srq.query().limit()).isZero();
            } finally {
                p[0].close();
                p[1].close();
            }
        }
    }

    @Test
    void queryModifyAndResize() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 2, 0)) {
            SrqAttributes a = srq.query();
            assertThat(a.maxWr()).isGreaterThanOrEqualTo(16);
            assertThat(a.maxSge()).isGreaterThanOrEqualTo(2);
            assertThat(a.limit()).isZero();
            srq.armLimit(5);
            assertThat(srq.query().limit()).isEqualTo(5);
            // refused before the verb (issue 12: a limit above max_wr was accepted at creation)
            assertThatThrownBy(() -> srq.armLimit(a.maxWr() + 1000)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("max_wr");
            boolean resizable = (ctx.queryDevice().deviceCapFlags() & (1 << 13)) != 0; // IBV_DEVICE_SRQ_RESIZE
            if (resizable) {
                srq.resize(128);
                assertThat(srq.query().maxWr()).isGreaterThanOrEqualTo(128);
            } else {
                assertThatThrownBy(() -> srq.resize(128)).isInstanceOf(VerbsException.class);
            }
        }
    }

    @Test
    void sixtyFourQueuePairsShareOneSrqAndEveryMessageArrivesOnceAttributed() throws Exception {
        int qps = 64;
        int perQp = 4;
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue scq = ctx.createCompletionQueue(1024); CompletionQueue rcq = ctx.createCompletionQueue(1024);
                MemoryRegion send = pd.allocate(qps * 64L, RW); MemoryRegion recv = pd.allocate(qps * perQp * 64L, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(qps * perQp, 1, 0);
                WorkCompletions wcs = new WorkCompletions(64); ReceiveBatch rb = new ReceiveBatch(qps * perQp, 1)) {
            for (int i = 0; i < qps * perQp; i++) {
                rb.receive(i, recv, i * 64L, 64);
            }
            srq.post(rb);
            List<QueuePair[]> pairs = new ArrayList<>();
            Map<Integer, Integer> senderOfReceiverQpn = new HashMap<>();
            try {
                for (int q = 0; q < qps; q++) {
                    QueuePair[] p = pair(pd, scq, scq, srq);
                    pairs.add(p);
                    senderOfReceiverQpn.put(p[1].qpNumber(), q);
                    send.segment().set(JAVA_INT, q * 64L, q);
                }
                List<Thread> senders = new ArrayList<>();
                for (int q = 0; q < qps; q++) {
                    QueuePair a = pairs.get(q)[0];
                    long off = q * 64L;
                    senders.add(Thread.ofVirtual().start(() -> {
                        try {
                            for (int k = 0; k < perQp; k++) {
                                a.postSend(k, send, off, 4);
                            }
                        } catch (VerbsException e) {
                            throw new RuntimeException(e);
                        }
                    }));
                }
                for (Thread t : senders) {
                    assertThat(t.join(java.time.Duration.ofSeconds(120))).isTrue();
                }
                Set<Long> buffers = new HashSet<>();
                Map<Integer, Integer> perSender = new HashMap<>();
                for (WorkCompletion c : await(rcq, wcs, 0)) {
                    buffers.add(c.wrId());
                }
                List<WorkCompletion> got = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
                while (got.size() < qps * perQp) {
                    int n = scq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        if (wcs.opcode(i) == WcOpcode.RECV || !wcs.isSuccess(i)) {
                            assertThat(wcs.isSuccess(i)).as("receive %s", wcs.get(i)).isTrue();
                            // the library hands back the buffer that received the data
                            assertThat(wcs.region(i)).isSameAs(recv);
                            assertThat(wcs.bufferOffset(i)).isEqualTo(wcs.wrId(i) * 64);
                            got.add(wcs.get(i));
                        }
                    }
                    if (n == 0) {
                        assertThat(System.nanoTime()).isLessThan(deadline);
                    }
                }
                for (WorkCompletion c : got) {
                    assertThat(buffers.add(c.wrId())).as("buffer %d used once", c.wrId()).isTrue();
                    int sender = c.buffer().get(JAVA_INT, 0);
                    assertThat(senderOfReceiverQpn.get(c.qpNumber())).as("attributed to the right QP")
                            .isEqualTo(sender);
                    perSender.merge(sender, 1, Integer::sum);
                }
                assertThat(perSender).hasSize(qps).allSatisfy((q, n) -> assertThat(n).isEqualTo(perQp));
            } finally {
                for (QueuePair[] p : pairs) {
                    p[0].close();
                    p[1].close();
                }
            }
        }
    }

    @Test
    void refusalsAndAForeignRegion() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                ProtectionDomain other = ctx.allocateProtectionDomain();
                CompletionQueue scq = ctx.createCompletionQueue(64); CompletionQueue rcq = ctx.createCompletionQueue(64);
                MemoryRegion mine = pd.allocate(4096, RW); MemoryRegion foreign = other.allocate(4096, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0);
                WorkCompletions wcs = new WorkCompletions(8)) {
            QueuePair[] p = pair(pd, scq, rcq, srq);
            try {
                assertThatThrownBy(() -> p[1].postReceive(1, mine, 0, 64)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("shared receive queue");
                assertThatThrownBy(srq::close).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("cannot close SharedReceiveQueue");
                srq.postReceive(7, foreign, 0, 64); // accepted by the post ...
                p[0].postSend(8, mine, 0, 64);
                WorkCompletion r = await(rcq, wcs, 1).get(0);
                assertThat(r.wrId()).isEqualTo(7);
                assertThat(r.status()).as("... and failed by the device").isNotEqualTo(WcStatus.SUCCESS);
            } finally {
                p[0].close();
                p[1].close();
            }
        }
    }

    @Test
    void throughTheEngineCompletionsNameTheQpAndHandBackTheBuffer() throws Exception {
        try (Context ctx = TestDevice.device().open();
                CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue scq = ctx.createCompletionQueue(64);
                MemoryRegion mr = pd.allocate(8192, RW); SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0)) {
            LinkedBlockingQueue<WorkCompletion> received = new LinkedBlockingQueue<>();
            CompletionQueue rcq = engine.createCompletionQueue(ctx, 64, received::add);
            QueuePair[] p = pair(pd, scq, rcq, srq);
            try (WorkCompletions wcs = new WorkCompletions(8)) {
                srq.postReceive(41, mr, 4096, 512);
                mr.segment().set(JAVA_INT, 0, 0xabcd);
                p[0].postSend(1, mr, 0, 4);
                WorkCompletion c = received.poll(120, TimeUnit.SECONDS);
                assertThat(c).isNotNull();
                assertThat(c.wrId()).isEqualTo(41);
                assertThat(c.qpNumber()).isEqualTo(p[1].qpNumber());
                assertThat(c.buffer().address()).isEqualTo(mr.address() + 4096);
                assertThat(c.buffer().get(JAVA_INT, 0)).isEqualTo(0xabcd);
                await(scq, wcs, 1);
            } finally {
                p[0].close();
                p[1].close();
                rcq.close();
            }
        }
    }

    /** Issue 12: a limit above the SRQ's max_wr was accepted (it can never fire as meant). */
    @Test
    void aLimitAboveMaxWrIsRefused() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            assertThatThrownBy(() -> pd.createSharedReceiveQueue(4, 1, 5)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("0 <= limit <= maxWr");
            try (SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0)) {
                int maxWr = srq.query().maxWr();
                assertThatThrownBy(() -> srq.armLimit(maxWr + 1)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("max_wr");
                assertThatThrownBy(() -> srq.armLimit(-1)).isInstanceOf(IllegalArgumentException.class);
                srq.armLimit(maxWr);
                assertThat(srq.query().limit()).isEqualTo(maxWr);
            }
        }
    }

    /** After SRQ_ERR (delivered as the context would deliver it) the SRQ can only be closed. */
    @Test
    void anSrqInErrorCanOnlyBeClosed() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                MemoryRegion mr = pd.allocate(4096, RW)) {
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0);
            CompletableFuture<AsyncEvent> seen = new CompletableFuture<>();
            srq.addEventListener(seen::complete);
            srq.dispatch(new AsyncEvent(AsyncEventType.SRQ_ERR, null, null, srq, 0, "SRQ catastrophic error"));
            assertThat(seen.get(1, TimeUnit.SECONDS).type()).isEqualTo(AsyncEventType.SRQ_ERR);
            assertThat(srq.isInError()).isTrue();
            assertThatThrownBy(() -> srq.postReceive(1, mr, 0, 64)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("can only be closed");
            assertThatThrownBy(() -> srq.armLimit(1)).isInstanceOf(IllegalStateException.class);
            srq.close();
            assertThat(srq.isClosed()).isTrue();
        }
    }

    @Test
    void udQueuePairsUseAnSrqToo() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(64); MemoryRegion mr = pd.allocate(8192, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0);
                WorkCompletions wcs = new WorkCompletions(8); SendBatch sb = new SendBatch(1, 1)) {
            QueuePair a = QueuePair.builder(pd, QpType.UD).completionQueue(cq).build();
            QueuePair b = QueuePair.builder(pd, QpType.UD).completionQueue(cq).sharedReceiveQueue(srq).build();
            try {
                for (QueuePair q : List.of(a, b)) {
                    q.toInit();
                    q.toRtr();
                    q.toRts(RtsAttributes.builder(0).build());
                }
                GidEntry gid = ctx.bestRoceGid(1);
                QpEndpoint target = b.localEndpoint(0, gid.index());
                srq.postReceive(3, mr, 4096, 1024);
                try (AddressHandle ah = pd.createAddressHandle(AddressHandle.Attributes.to(target, 1, gid.index()))) {
                    mr.segment().set(JAVA_INT, 0, 0x5151);
                    a.post(sb.sendTo(4, mr, 0, 4, ah, target.qpn(), InitAttributes.DEFAULT_QKEY));
                    List<WorkCompletion> c = await(cq, wcs, 2);
                    WorkCompletion r = c.stream().filter(x -> x.opcode() == WcOpcode.RECV).findFirst().orElseThrow();
                    assertThat(r.qpNumber()).isEqualTo(b.qpNumber());
                    assertThat(r.sourceQp()).isEqualTo(a.qpNumber());
                    assertThat(r.buffer().get(JAVA_INT, QueuePair.UD_GRH_BYTES)).isEqualTo(0x5151);
                }
            } finally {
                a.close();
                b.close();
            }
        }
    }

    /**
     * The demo's burst (issue 8): senders overrun an SRQ kept topped up both by the poller and by
     * {@link SharedReceiveQueue#refillOnLimit} on the engine thread. The limit event and the receive
     * completions travel through different fds (async fd, CQ), so the poller can see the last completion
     * before the engine has dispatched the event; {@link Context#processAsyncEvents()} is the barrier: when it
     * returns, every event the device raised before the call has been delivered (by this thread or by the
     * engine, which holds the same lock while it dispatches). So after it, every fire was delivered and
     * re-armed: the device's limit is back at the watermark. Without the barrier this failed in most runs.
     */
    @Test
    void everyLimitEventIsDeliveredAndRearmedWhenProcessAsyncEventsReturns() throws Exception {
        int senders = 4, perSender = 32, depth = 16, watermark = 8, slot = 64, rounds = 20;
        try (Context ctx = TestDevice.device().open();
                CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue scq = ctx.createCompletionQueue(senders * perSender + 16);
                CompletionQueue rcq = ctx.createCompletionQueue(senders * perSender + 16);
                MemoryRegion pool = pd.allocate(8L * depth * slot, RW); MemoryRegion src = pd.allocate(4096, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(depth, 1, 0);
                WorkCompletions wcs = new WorkCompletions(64)) {
            engine.watchAsyncEvents(ctx);
            java.util.concurrent.atomic.AtomicInteger events = new java.util.concurrent.atomic.AtomicInteger();
            srq.addEventListener(e -> events.incrementAndGet());
            int[] next = {0};
            SharedReceiveQueue.RefillAction topUp = s -> {
                synchronized (next) {
                    while (s.outstanding() < depth) {
                        int i = next[0]++ % (8 * depth);
                        s.postReceive(i, pool, (long) i * slot, slot);
                    }
                }
            };
            topUp.refill(srq);
            srq.refillOnLimit(watermark, topUp);
            List<QueuePair[]> pairs = new ArrayList<>();
            try {
                for (int q = 0; q < senders; q++) {
                    QueuePair a = QueuePair.builder(pd, QpType.RC).completionQueue(scq).capacity(perSender, 1).build();
                    QueuePair b = QueuePair.builder(pd, QpType.RC).sendCompletionQueue(scq).receiveCompletionQueue(rcq)
                            .capacity(1, 0).sharedReceiveQueue(srq).build();
                    pairs.add(new QueuePair[] {a, b});
                    a.connect(b.localEndpoint(10 + q), q);
                    b.connect(a.localEndpoint(q), 10 + q);
                }
                List<String> bad = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    int before = events.get();
                    for (QueuePair[] p : pairs) {
                        for (int i = 0; i < perSender; i++) {
                            p[0].postSend(i, src, 0, 4);
                        }
                    }
                    int received = 0;
                    int sent = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    while (received < senders * perSender || sent < senders * perSender) {
                        int n = rcq.poll(wcs);
                        for (int i = 0; i < n; i++) {
                            assertThat(wcs.isSuccess(i)).as("receive %s", wcs.get(i)).isTrue();
                        }
                        received += n;
                        if (n > 0) {
                            topUp.refill(srq);
                        }
                        sent += scq.poll(wcs);
                        assertThat(System.nanoTime()).as("round %d: %d received, %d sent", round, received, sent)
                                .isLessThan(deadline);
                    }
                    ctx.processAsyncEvents(); // the barrier
                    int fired = events.get() - before;
                    int limit = srq.query().limit();
                    if (fired < 1 || limit != watermark) {
                        bad.add("round " + round + ": " + fired + " event(s) delivered, device limit " + limit);
                    }
                }
                assertThat(bad).as("rounds in which a raised limit event was not yet delivered and re-armed").isEmpty();
            } finally {
                for (QueuePair[] p : pairs) {
                    p[0].close();
                    p[1].close();
                }
            }
        }
    }

    /**
     * Issue 9: a listener that throws (here {@link IllegalStateException}, which the engine used to take for
     * "closed" and unregister the fd for good) neither hides the event from the other listeners nor stops
     * later events: it is logged and counted ({@link Context#listenerFailures()}).
     */
    @Test
    void aThrowingListenerDoesNotStopTheOtherListenersOrLaterEvents() throws Exception {
        try (Context ctx = TestDevice.device().open();
                CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                ProtectionDomain pd = ctx.allocateProtectionDomain(); CompletionQueue scq = ctx.createCompletionQueue(64);
                CompletionQueue rcq = ctx.createCompletionQueue(64); MemoryRegion mr = pd.allocate(65536, RW);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(10, 1, 0);
                WorkCompletions wcs = new WorkCompletions(16)) {
            LinkedBlockingQueue<AsyncEvent> bySrq = new LinkedBlockingQueue<>();
            LinkedBlockingQueue<AsyncEvent> byContext = new LinkedBlockingQueue<>();
            srq.addEventListener(e -> {
                throw new IllegalStateException("listener bug (on purpose)");
            });
            srq.addEventListener(bySrq::add);
            ctx.addAsyncEventListener(e -> {
                throw new IllegalArgumentException("another listener bug (on purpose)");
            });
            ctx.addAsyncEventListener(byContext::add);
            engine.watchAsyncEvents(ctx);
            QueuePair[] p = pair(pd, scq, rcq, srq);
            try {
                for (int i = 0; i < 10; i++) {
                    srq.postReceive(i, mr, i * 1024L, 1024);
                }
                for (int round = 1; round <= 2; round++) {
                    srq.armLimit(srq.outstanding()); // the next receive consumed crosses it
                    p[0].postSend(round, mr, 32_768, 64);
                    await(scq, wcs, 1);
                    await(rcq, wcs, 1);
                    AsyncEvent e = bySrq.poll(120, TimeUnit.SECONDS);
                    assertThat(e).as("round %d: the SRQ's second listener got the event", round).isNotNull();
                    assertThat(e.type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
                    assertThat(byContext.poll(120, TimeUnit.SECONDS)).as("round %d: the context's listener", round)
                            .isSameAs(e);
                    ctx.processAsyncEvents(); // barrier: both throwing listeners have run
                    assertThat(ctx.listenerFailures()).isEqualTo(2L * round);
                }
            } finally {
                p[0].close();
                p[1].close();
            }
        }
    }
}
