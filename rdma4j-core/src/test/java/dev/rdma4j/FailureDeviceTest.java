package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Failures provoked on purpose: immediate errors and failed completions with their typed status. */
@Tag("device")
@SuppressWarnings("try") // resources are closed early on purpose, to test close-while-busy
class FailureDeviceTest {
    private static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
        AccessFlag.REMOTE_ATOMIC};

    @Test
    void badRkeyIsRemoteAccessError() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion src = lb.pd.allocate(4096, ALL);
                MemoryRegion dst = lb.pd.allocate(4096, ALL); SendBatch sb = new SendBatch(1, 1)) {
            RemoteRegion wrongKey = new RemoteRegion(dst.address(), dst.length(), dst.rkey() ^ 0x5a5a00);
            lb.a.post(sb.write(1, src, 0, 64, wrongKey, 0));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(c.status().text()).isEqualTo("remote access error");
            assertThat(c.wrId()).isEqualTo(1);
            assertThat(lb.a.query().state()).isEqualTo(QpState.ERROR);
        }
    }

    @Test
    void outOfBoundsRemoteAccessFails() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion src = lb.pd.allocate(8192, ALL);
                MemoryRegion dst = lb.pd.allocate(4096, ALL); SendBatch sb = new SendBatch(1, 1)) {
            // Java checks bounds against what the peer announced; a lying announcement reaches the device
            RemoteRegion tooLong = new RemoteRegion(dst.address(), 1 << 20, dst.rkey());
            lb.a.post(sb.read(2, src, 0, 8192, tooLong, 0));
            assertThat(lb.awaitOne(lb.cqA).status()).isIn(WcStatus.REM_ACCESS_ERR, WcStatus.REM_INV_REQ_ERR);
        }
    }

    @Test
    void postingInTheWrongStateIsRefused() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(8); MemoryRegion mr = pd.allocate(64, AccessFlag.LOCAL_WRITE);
                QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).build()) {
            assertThatThrownBy(() -> qp.postReceive(1, mr, 0, 64)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.verb()).isEqualTo("ibv_post_recv");
                assertThat(e.errno()).isEqualTo(22);
                assertThat(e.getMessage()).contains("RESET");
            });
            qp.toInit();
            qp.postReceive(1, mr, 0, 64); // receives are fine from INIT on
            assertThatThrownBy(() -> qp.postSend(2, mr, 0, 64)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.verb()).isEqualTo("ibv_post_send");
                assertThat(e.errno()).isEqualTo(22);
                assertThat(e.getMessage()).contains("sends need RTS");
            });
            assertThatThrownBy(mr::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("posted work request");
        }
    }

    @Test
    void transitionsOutOfOrderAreRefusedBeforeTheVerb() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(8);
                QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).build()) {
            QpEndpoint self = qp.localEndpoint(1);
            assertThatThrownBy(() -> qp.toRtr(RtrAttributes.builder(self).build()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("RTR can only follow INIT");
            assertThatThrownBy(() -> qp.toRts(RtsAttributes.builder(1).build()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("RTS can only follow RTR");
            assertThatThrownBy(qp::toRtr).isInstanceOf(IllegalStateException.class).hasMessageContaining("peer");
            qp.toInit();
            assertThatThrownBy(qp::toInit).isInstanceOf(IllegalStateException.class);
            assertThat(qp.query().state()).isEqualTo(QpState.INIT);
            qp.toError();
            assertThat(qp.query().state()).isEqualTo(QpState.ERROR);
            qp.reset();
            assertThat(qp.query().state()).isEqualTo(QpState.RESET);
            qp.toInit(); // the cycle can start again
            assertThat(qp.state()).isEqualTo(QpState.INIT);
        }
        // a bad attribute is the verb's error, with its errno
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(8);
                QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).build()) {
            assertThatThrownBy(() -> qp.toInit(InitAttributes.builder().port(9).build()))
                    .isInstanceOfSatisfying(VerbsException.class, e -> {
                        assertThat(e.verb()).isEqualTo("ibv_modify_qp");
                        assertThat(e.errno()).isEqualTo(22);
                    });
            assertThat(qp.state()).isEqualTo(QpState.RESET);
        }
    }

    @Test
    void tooManySgesOversizedInlineAndFullQueuesAreImmediateErrors() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC, q -> q.capacity(4, 4).maxSge(2, 1).maxInlineData(32));
                MemoryRegion mr = lb.pd.allocate(4096, ALL); SendBatch sb = new SendBatch(8, 8)) {
            int maxSge = lb.a.capabilities().maxSendSge();
            sb.send(1, mr, 0, 8);
            for (int i = 0; i < maxSge; i++) {
                sb.gather(mr, 8, 8);
            }
            assertThat(lb.a.tryPost(sb)).isEqualTo(22);
            assertThat(sb.failedIndex()).isZero();
            assertThatThrownBy(() -> lb.a.post(sb)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("scatter/gather entries");

            int maxInline = lb.a.capabilities().maxInlineData();
            sb.clear().send(2, mr, 0, 8).inline().send(3, mr, 0, maxInline + 1).inline();
            assertThatThrownBy(() -> lb.a.post(sb)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.errno()).isEqualTo(22);
                assertThat(e.getMessage()).contains("request 1 of 2").contains("inline bytes");
            });
            assertThat(sb.failedIndex()).isEqualTo(1);

            int depth = lb.a.capabilities().maxSendWr();
            sb.clear();
            try (SendBatch many = new SendBatch(depth + 1, 1)) {
                for (int i = 0; i <= depth; i++) {
                    many.send(i, mr, 0, 8).unsignaled();
                }
                assertThat(lb.a.tryPost(many)).isEqualTo(12); // ENOMEM: more than the queue holds
            }
        }
    }

    @Test
    void receiveBufferTooSmallIsLocalLengthError() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, ALL)) {
            lb.b.postReceive(1, mr, 0, 16);
            lb.a.postSend(2, mr, 1024, 100);
            WorkCompletion r = lb.awaitOne(lb.cqB);
            // The verbs say LOC_LEN_ERR; rxe up to Linux 6.1 reports LOC_QP_OP_ERR (its copy_data returns
            // EINVAL, not ENOSPC, so the responder calls the WQE malformed).
            assertThat(r.status()).isIn(WcStatus.LOC_LEN_ERR, WcStatus.LOC_QP_OP_ERR);
            assertThat(r.wrId()).isEqualTo(1);
            WorkCompletion s = lb.awaitOne(lb.cqA); // the requester learns of it through the NAK
            assertThat(s.isSuccess()).isFalse();
            assertThat(s.wrId()).isEqualTo(2);
        }
    }

    @Test
    void noReceivePostedExhaustsRnrRetries() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC, q -> q, RtsAttributes.builder(0).rnrRetry(1));
                MemoryRegion mr = lb.pd.allocate(4096, ALL)) {
            lb.a.postSend(5, mr, 0, 64);
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
            assertThat(c.wrId()).isEqualTo(5);
        }
    }

    @Test
    void errorStateFlushesOutstandingRequests() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, ALL);
                ReceiveBatch rb = new ReceiveBatch(3, 1)) {
            lb.b.post(rb.receive(1, mr, 0, 64).receive(2, mr, 64, 64).receive(3, mr, 128, 64));
            assertThatThrownBy(mr::close).isInstanceOf(IllegalStateException.class);
            lb.b.toError();
            List<WorkCompletion> flushed = lb.await(lb.cqB, 3);
            assertThat(flushed).extracting(WorkCompletion::status).containsOnly(WcStatus.WR_FLUSH_ERR);
            assertThat(flushed).extracting(WorkCompletion::wrId).containsExactly(1L, 2L, 3L);
            mr.close(); // the flush completions released it
            assertThat(mr.isClosed()).isTrue();
        }
    }

    @Test
    void closingAQueuePairReleasesItsOutstandingRequests() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, ALL)) {
            lb.b.postReceive(1, mr, 0, 64);
            assertThatThrownBy(mr::close).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(lb.cqB::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("still used");
            lb.b.close();
            mr.close();
            lb.assertQuiet(lb.cqB);
            assertThatThrownBy(() -> lb.b.postReceive(2, mr, 0, 64)).isInstanceOf(IllegalStateException.class);
        }
    }
}
