package dev.rdma4j;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every RC operation end to end between two connected QPs, with the data compared. */
@Tag("device")
class RcOperationsDeviceTest {
    private static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
        AccessFlag.REMOTE_ATOMIC};

    private Loopback lb;
    private MemoryRegion src;
    private MemoryRegion dst;

    @BeforeEach
    void connect() throws Exception {
        lb = new Loopback(QpType.RC, q -> q.maxSge(4, 4).maxInlineData(64).capacity(32, 32));
        src = lb.pd.allocate(1 << 16, ALL);
        dst = lb.pd.allocate(1 << 16, ALL);
        fill(src.segment(), 1);
    }

    @AfterEach
    void close() {
        src.close();
        dst.close();
        lb.close();
    }

    private static void fill(MemorySegment s, long seed) {
        byte[] b = new byte[(int) s.byteSize()];
        new Random(seed).nextBytes(b);
        MemorySegment.copy(b, 0, s, JAVA_BYTE, 0, b.length);
    }

    private static byte[] bytes(MemorySegment s, long off, int len) {
        return s.asSlice(off, len).toArray(JAVA_BYTE);
    }

    @Test
    void sendAndReceive() throws Exception {
        lb.b.postReceive(7, dst, 100, 4096);
        lb.a.postSend(8, src, 10, 3000);
        WorkCompletion s = lb.awaitOne(lb.cqA);
        WorkCompletion r = lb.awaitOne(lb.cqB);
        assertThat(s.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(s.wrId()).isEqualTo(8);
        assertThat(s.opcode()).isEqualTo(WcOpcode.SEND);
        assertThat(r.isSuccess()).isTrue();
        assertThat(r.wrId()).isEqualTo(7);
        assertThat(r.opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(r.byteLength()).isEqualTo(3000);
        assertThat(r.qpNumber()).isEqualTo(lb.b.qpNumber());
        assertThat(r.hasImmediate()).isFalse();
        assertThat(bytes(dst.segment(), 100, 3000)).isEqualTo(bytes(src.segment(), 10, 3000));
    }

    @Test
    void sendWithImmediateAndWriteWithImmediate() throws Exception {
        try (ReceiveBatch rb = new ReceiveBatch(2, 1); SendBatch sb = new SendBatch(2, 1)) {
            lb.b.post(rb.receive(1, dst, 0, 512).receive(2, dst, 512, 512));
            lb.a.post(sb.sendWithImmediate(11, src, 0, 100, 0xCAFEBABE)
                    .writeWithImmediate(12, src, 1000, 2000, dst.remote(), 4000, 0x12345678));
            List<WorkCompletion> r = lb.await(lb.cqB, 2);
            assertThat(r.get(0).wrId()).isEqualTo(1);
            assertThat(r.get(0).opcode()).isEqualTo(WcOpcode.RECV);
            assertThat(r.get(0).hasImmediate()).isTrue();
            assertThat(r.get(0).immediateData()).isEqualTo(0xCAFEBABE);
            assertThat(r.get(1).wrId()).isEqualTo(2);
            assertThat(r.get(1).opcode()).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(r.get(1).immediateData()).isEqualTo(0x12345678);
            assertThat(r.get(1).byteLength()).isEqualTo(2000);
            assertThat(lb.await(lb.cqA, 2)).extracting(WorkCompletion::wrId).containsExactly(11L, 12L);
            assertThat(bytes(dst.segment(), 0, 100)).isEqualTo(bytes(src.segment(), 0, 100));
            assertThat(bytes(dst.segment(), 4000, 2000)).isEqualTo(bytes(src.segment(), 1000, 2000));
        }
    }

    @Test
    void rdmaWriteAndReadMoveDataWithoutReceives() throws Exception {
        try (SendBatch sb = new SendBatch(2, 1)) {
            lb.a.post(sb.write(21, src, 0, 30_000, dst.remote(), 1234));
            assertThat(lb.awaitOne(lb.cqA).opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
            assertThat(bytes(dst.segment(), 1234, 30_000)).isEqualTo(bytes(src.segment(), 0, 30_000));

            fill(dst.segment(), 99);
            lb.a.post(sb.clear().read(22, src, 40_000, 20_000, dst.remote(), 5));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.opcode()).isEqualTo(WcOpcode.RDMA_READ);
            assertThat(c.wrId()).isEqualTo(22);
            assertThat(bytes(src.segment(), 40_000, 20_000)).isEqualTo(bytes(dst.segment(), 5, 20_000));
            lb.assertQuiet(lb.cqB); // one-sided: the target saw nothing
        }
    }

    @Test
    void atomicsReturnOldValuesAndUpdateTarget() throws Exception {
        dst.segment().set(JAVA_LONG, 64, 1000L);
        try (SendBatch sb = new SendBatch(1, 1)) {
            lb.a.post(sb.fetchAndAdd(31, src, 0, dst.remote(), 64, 5));
            assertThat(lb.awaitOne(lb.cqA).opcode()).isEqualTo(WcOpcode.FETCH_ADD);
            assertThat(src.segment().get(JAVA_LONG, 0)).isEqualTo(1000L);
            assertThat(dst.segment().get(JAVA_LONG, 64)).isEqualTo(1005L);

            lb.a.post(sb.clear().compareAndSwap(32, src, 8, dst.remote(), 64, 1005, 77));
            assertThat(lb.awaitOne(lb.cqA).opcode()).isEqualTo(WcOpcode.COMP_SWAP);
            assertThat(src.segment().get(JAVA_LONG, 8)).isEqualTo(1005L);
            assertThat(dst.segment().get(JAVA_LONG, 64)).isEqualTo(77L);

            lb.a.post(sb.clear().compareAndSwap(33, src, 16, dst.remote(), 64, 1, 2)); // compare fails
            lb.awaitOne(lb.cqA);
            assertThat(src.segment().get(JAVA_LONG, 16)).isEqualTo(77L);
            assertThat(dst.segment().get(JAVA_LONG, 64)).isEqualTo(77L);
        }
    }

    @Test
    void atomicsAreCheckedForAlignmentAndBounds() {
        try (SendBatch sb = new SendBatch(1, 1)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> sb.fetchAndAdd(1, src, 0, dst.remote(), 3, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("8-byte aligned");
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> sb.clear().fetchAndAdd(1, src, (1 << 16) - 4, dst.remote(), 0, 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset 65532 + length 8 exceeds the 65536 bytes of the region");
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> sb.clear().write(1, src, 0, 100, dst.remote(), (1 << 16) - 50))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("remoteOffset 65486 + length 100 exceeds the 65536 bytes of the remote region");
        }
    }

    @Test
    void gatherAndScatterAcrossSeveralEntries() throws Exception {
        try (ReceiveBatch rb = new ReceiveBatch(1, 4); SendBatch sb = new SendBatch(1, 4)) {
            lb.b.post(rb.receive(41, dst, 0, 10).scatter(dst, 1000, 20).scatter(dst, 2000, 70));
            lb.a.post(sb.send(42, src, 0, 30).gather(src, 500, 30).gather(src, 900, 40));
            assertThat(lb.awaitOne(lb.cqB).byteLength()).isEqualTo(100);
            lb.awaitOne(lb.cqA);
            byte[] sent = new byte[100];
            System.arraycopy(bytes(src.segment(), 0, 30), 0, sent, 0, 30);
            System.arraycopy(bytes(src.segment(), 500, 30), 0, sent, 30, 30);
            System.arraycopy(bytes(src.segment(), 900, 40), 0, sent, 60, 40);
            byte[] got = new byte[100];
            System.arraycopy(bytes(dst.segment(), 0, 10), 0, got, 0, 10);
            System.arraycopy(bytes(dst.segment(), 1000, 20), 0, got, 10, 20);
            System.arraycopy(bytes(dst.segment(), 2000, 70), 0, got, 30, 70);
            assertThat(got).isEqualTo(sent);
        }
    }

    @Test
    void inlineUnsignaledAndChainedPosts() throws Exception {
        try (ReceiveBatch rb = new ReceiveBatch(8, 1); SendBatch sb = new SendBatch(8, 1)) {
            for (int i = 0; i < 8; i++) {
                rb.receive(100 + i, dst, i * 256L, 256);
            }
            lb.b.post(rb);
            for (int i = 0; i < 8; i++) {
                sb.send(200 + i, src, i * 64L, 64).inline();
                if (i < 7) {
                    sb.unsignaled();
                }
            }
            lb.a.post(sb);
            // the one signaled request retires the seven unsignaled ones before it
            WorkCompletion last = lb.awaitOne(lb.cqA);
            assertThat(last.wrId()).isEqualTo(207);
            lb.assertQuiet(lb.cqA);
            List<WorkCompletion> r = lb.await(lb.cqB, 8);
            assertThat(r).extracting(WorkCompletion::wrId).containsExactly(100L, 101L, 102L, 103L, 104L, 105L, 106L,
                    107L);
            for (int i = 0; i < 8; i++) {
                assertThat(bytes(dst.segment(), i * 256L, 64)).isEqualTo(bytes(src.segment(), i * 64L, 64));
            }
            src.close(); // every pin was released by the completions: the regions close
            dst.close();
        }
    }

    @Test
    void batchesEncodedOnceArePostedAgainWithNewIds() throws Exception {
        try (ReceiveBatch rb = new ReceiveBatch(1, 1); SendBatch sb = new SendBatch(1, 1)) {
            rb.receive(0, dst, 0, 256);
            sb.send(0, src, 0, 128);
            for (int i = 0; i < 5; i++) {
                rb.setWrId(0, 300 + i);
                lb.b.post(rb);
                sb.setWrId(0, 400 + i);
                src.segment().set(JAVA_LONG, 0, 1000L + i);
                lb.a.post(sb);
                WorkCompletion s = lb.awaitOne(lb.cqA);
                WorkCompletion r = lb.awaitOne(lb.cqB);
                assertThat(s.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(s.wrId()).as("the id set for this post").isEqualTo(400 + i);
                assertThat(r.wrId()).isEqualTo(300 + i);
                assertThat(r.byteLength()).isEqualTo(128);
                assertThat(dst.segment().get(JAVA_LONG, 0)).as("the same request carried this round's data")
                        .isEqualTo(1000L + i);
            }
            lb.assertQuiet(lb.cqA);
            lb.assertQuiet(lb.cqB);
        }
    }

    @Test
    void queryShowsTheConnection() throws Exception {
        QpAttributes qa = lb.a.query();
        assertThat(qa.state()).isEqualTo(QpState.RTS);
        assertThat(lb.a.state()).isEqualTo(QpState.RTS);
        assertThat(qa.destQpNumber()).isEqualTo(lb.b.qpNumber());
        assertThat(qa.sqPsn()).isEqualTo(0x1111);
        assertThat(qa.rqPsn()).isEqualTo(0x2222);
        assertThat(qa.pathMtu()).isEqualTo(lb.ctx.queryPort(1).activeMtu());
        assertThat(qa.timeout()).isEqualTo(14);
        assertThat(qa.retryCount()).isEqualTo(7);
        assertThat(qa.rnrRetry()).isEqualTo(7);
        assertThat(qa.maxRdAtomic()).isEqualTo(1);
        assertThat(qa.maxDestRdAtomic()).isEqualTo(1);
        assertThat(qa.minRnrTimer()).isEqualTo(12);
        assertThat(qa.port()).isEqualTo(1);
        assertThat(qa.global()).isTrue();
        assertThat(qa.destGid()).isEqualTo(lb.ctx.bestRoceGid(1).gid());
        assertThat(qa.sgidIndex()).isEqualTo(lb.ctx.bestRoceGid(1).index());
        assertThat(qa.accessMask()).isEqualTo(AccessFlag.mask(java.util.EnumSet.of(AccessFlag.LOCAL_WRITE,
                AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ, AccessFlag.REMOTE_ATOMIC)));
        assertThat(lb.a.capabilities().maxSendSge()).isGreaterThanOrEqualTo(4);
        assertThat(lb.a.capabilities().maxInlineData()).isGreaterThanOrEqualTo(64);
    }
}
