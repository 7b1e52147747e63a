package dev.rdma4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.SendBatch;
import dev.rdma4j.TestDevice;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Extended completion queues ({@code ibv_create_cq_ex}, polled through {@code ibv_start_poll},
 * {@code ibv_next_poll}, {@code ibv_end_poll} and the {@code ibv_wc_read_*} accessors) on the device: plain polling
 * sees what {@code ibv_poll_cq} would (opcodes, lengths, immediates, QP numbers, failed statuses, rdma4j's wr_ids),
 * the completion engine drives them in event mode (arm, drain, sleep), and timestamps are refused where the device
 * has none.
 */
@Tag("device")
class ExtendedCompletionQueueDeviceTest {
    private static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ};

    @Test
    void plainPollingReadsEveryFieldThroughTheAccessors() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cqA = ctx.createExtendedCompletionQueue(32, null, 0, false);
                CompletionQueue cqB = ctx.createExtendedCompletionQueue(32, null, 0, false);
                MemoryRegion mem = pd.allocate(8192, ALL); SendBatch sb = new SendBatch(4, 1);
                ReceiveBatch rb = new ReceiveBatch(4, 1); WorkCompletions wcs = new WorkCompletions(8)) {
            assertThat(cqA.isExtended()).isTrue();
            QueuePair[] qps = connect(pd, cqA, cqB);
            try {
                QueuePair a = qps[0];
                QueuePair b = qps[1];
                b.post(rb.receive(21, mem, 4096, 256).receive(22, mem, 4352, 256));
                a.post(sb.sendWithImmediate(11, mem, 0, 64, 0x01020304)
                        .writeWithImmediate(12, mem, 64, 32, mem.remote(), 6000, 0x0a0b0c0d));
                List<WorkCompletion> sent = await(cqA, wcs, 2);
                assertThat(sent).extracting(WorkCompletion::wrId).containsExactly(11L, 12L);
                assertThat(sent).extracting(WorkCompletion::opcode).containsExactly(WcOpcode.SEND,
                        WcOpcode.RDMA_WRITE);
                List<WorkCompletion> got = await(cqB, wcs, 2);
                assertThat(got).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
                assertThat(got).extracting(WorkCompletion::wrId).containsExactly(21L, 22L);
                assertThat(got.get(0).opcode()).isEqualTo(WcOpcode.RECV);
                assertThat(got.get(0).byteLength()).isEqualTo(64);
                assertThat(got.get(0).hasImmediate()).isTrue();
                assertThat(got.get(0).immediateData()).isEqualTo(0x01020304);
                assertThat(got.get(0).qpNumber()).isEqualTo(b.qpNumber());
                assertThat(got.get(1).opcode()).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
                assertThat(got.get(1).immediateData()).isEqualTo(0x0a0b0c0d);
                assertThatThrownBy(() -> wcs.completionTimestamp(0)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("timestamp");

                // failed completions: a write with a wrong key, then the flushed receive
                b.post(rb.clear().receive(23, mem, 4608, 256));
                a.post(sb.clear().write(13, mem, 0, 8, new dev.rdma4j.RemoteRegion(mem.address(), 8, mem.rkey() ^ 0x55),
                        0));
                WorkCompletion refused = await(cqA, wcs, 1).get(0);
                assertThat(refused.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
                assertThat(refused.wrId()).isEqualTo(13);
                b.toError();
                WorkCompletion flushed = await(cqB, wcs, 1).get(0);
                assertThat(flushed.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
                assertThat(flushed.wrId()).isEqualTo(23);
                assertThat(flushed.isReceive()).isTrue();
            } finally {
                qps[0].close();
                qps[1].close();
            }
        }
    }

    @Test
    void theEngineDrivesAnExtendedQueueInEventMode() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("cq-ex").build()) {
            CompletionQueue cqA = engine.createExtendedCompletionQueue(ctx, 32, false);
            CompletionQueue cqB = engine.createExtendedCompletionQueue(ctx, 32, false);
            QueuePair[] qps = connect(pd, cqA, cqB);
            try (AsyncQueuePair a = engine.wrap(qps[0]); AsyncQueuePair b = engine.wrap(qps[1]);
                    MemoryRegion mem = pd.allocate(8192, ALL)) {
                for (int round = 0; round < 20; round++) { // each round's completions come after an arm: events
                    var received = b.receiveAsync(mem, 4096, 256);
                    mem.segment().set(java.lang.foreign.ValueLayout.JAVA_INT, 0, round);
                    WorkCompletion sent = a.sendAsync(mem, 0, 64).get(60, TimeUnit.SECONDS);
                    assertThat(sent.opcode()).isEqualTo(WcOpcode.SEND);
                    WorkCompletion r = received.get(60, TimeUnit.SECONDS);
                    assertThat(r.byteLength()).isEqualTo(64);
                    assertThat(mem.segment().get(java.lang.foreign.ValueLayout.JAVA_INT, 4096)).isEqualTo(round);
                    EngineProbe.awaitTurn(engine); // a whole turn (drain, arm) before the next round's send
                }
            } finally {
                cqA.close();
                cqB.close();
            }
        }
    }

    @Test
    void timestampsAreRefusedWhereTheDeviceHasNone() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            if (ctx.queryDeviceExtended().completionTimestampMask() == 0) {
                assertThatThrownBy(() -> ctx.createExtendedCompletionQueue(16, null, 0, true))
                        .isInstanceOf(VerbsException.class).hasMessageContaining("completion_timestamp_mask");
            } else {
                try (CompletionQueue cq = ctx.createExtendedCompletionQueue(16, null, 0, true)) {
                    assertThat(cq.isExtended()).isTrue();
                }
            }
        }
    }

    private static QueuePair[] connect(ProtectionDomain pd, CompletionQueue cqA, CompletionQueue cqB)
            throws VerbsException {
        QueuePair a = QueuePair.builder(pd, QpType.RC).completionQueue(cqA).capacity(8, 8).build();
        QueuePair b = QueuePair.builder(pd, QpType.RC).completionQueue(cqB).capacity(8, 8).build();
        QpEndpoint ea = a.localEndpoint(0x300);
        QpEndpoint eb = b.localEndpoint(0x400);
        a.toInit();
        b.toInit();
        a.toRtr(RtrAttributes.builder(eb).build());
        b.toRtr(RtrAttributes.builder(ea).build());
        a.toRts(RtsAttributes.builder(0x300).retryCount(1).build());
        b.toRts(RtsAttributes.builder(0x400).build());
        return new QueuePair[] {a, b};
    }

    private static List<WorkCompletion> await(CompletionQueue cq, WorkCompletions wcs, int n) throws Exception {
        List<WorkCompletion> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
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
}
