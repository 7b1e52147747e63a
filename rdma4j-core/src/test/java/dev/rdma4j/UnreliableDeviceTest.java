package dev.rdma4j;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** UC and UD queue pairs: the operations that exist there, address handles and the GRH. */
@Tag("device")
class UnreliableDeviceTest {
    private static final AccessFlag[] RW = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE};

    @Test
    void ucSendAndRdmaWrite() throws Exception {
        try (Loopback lb = new Loopback(QpType.UC); MemoryRegion src = lb.pd.allocate(8192, RW);
                MemoryRegion dst = lb.pd.allocate(8192, RW); SendBatch sb = new SendBatch(2, 1)) {
            src.segment().asSlice(0, 4096).fill((byte) 0x42);
            lb.b.postReceive(1, dst, 0, 1024);
            lb.a.post(sb.send(2, src, 0, 1000).write(3, src, 0, 4096, dst.remote(), 4096));
            WorkCompletion r = lb.awaitOne(lb.cqB);
            assertThat(r.isSuccess()).isTrue();
            assertThat(r.byteLength()).isEqualTo(1000);
            assertThat(lb.await(lb.cqA, 2)).extracting(WorkCompletion::opcode)
                    .containsExactly(WcOpcode.SEND, WcOpcode.RDMA_WRITE);
            assertThat(dst.segment().asSlice(4096, 4096).toArray(JAVA_BYTE)).containsOnly((byte) 0x42);
            assertThat(dst.segment().asSlice(0, 1000).toArray(JAVA_BYTE)).containsOnly((byte) 0x42);
            assertThat(lb.a.query().state()).isEqualTo(QpState.RTS);
        }
    }

    @Test
    void udSendThroughAddressHandleWithGrh() throws Exception {
        try (Loopback lb = new Loopback(QpType.UD); MemoryRegion src = lb.pd.allocate(4096, RW);
                MemoryRegion dst = lb.pd.allocate(4096, RW); SendBatch sb = new SendBatch(1, 1)) {
            for (int i = 0; i < 512; i++) {
                src.segment().set(JAVA_BYTE, i, (byte) i);
            }
            GidEntry gid = lb.ctx.bestRoceGid(1);
            QpEndpoint target = lb.b.localEndpoint(0, gid.index());
            try (AddressHandle ah = lb.pd.createAddressHandle(AddressHandle.Attributes.to(target, 1, gid.index()))) {
                lb.b.postReceive(9, dst, 0, QueuePair.UD_GRH_BYTES + 512);
                lb.a.post(sb.sendTo(10, src, 0, 512, ah, target.qpn(), InitAttributes.DEFAULT_QKEY));
                assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class); // the send pins it
                assertThat(lb.awaitOne(lb.cqA).isSuccess()).isTrue();
                WorkCompletion r = lb.awaitOne(lb.cqB);
                assertThat(r.isSuccess()).isTrue();
                assertThat(r.byteLength()).isEqualTo(QueuePair.UD_GRH_BYTES + 512);
                assertThat(r.sourceQp()).isEqualTo(lb.a.qpNumber());
                assertThat(r.flags() & WorkCompletions.FLAG_GRH).isNotZero();
                assertThat(dst.segment().asSlice(QueuePair.UD_GRH_BYTES, 512).toArray(JAVA_BYTE))
                        .isEqualTo(src.segment().asSlice(0, 512).toArray(JAVA_BYTE));
                GlobalRouteHeader grh = GlobalRouteHeader.read(dst.segment(), 0);
                assertThat(grh.sourceGid()).isEqualTo(gid.gid());
                assertThat(grh.destinationGid()).isEqualTo(gid.gid());
                assertThat(grh.ipv4()).isEqualTo(gid.gid().isIpv4Mapped());
            }
            assertThat(lb.b.query().qkey()).isEqualTo(InitAttributes.DEFAULT_QKEY);
        }
    }

    @Test
    void udRejectsConnectedTransitions() throws Exception {
        try (Loopback lb = new Loopback(QpType.UD)) {
            MemorySegment unused = MemorySegment.NULL;
            assertThat(unused.byteSize()).isZero();
            assertThatThrownBy(() -> lb.a.toRtr(RtrAttributes.builder(lb.b.localEndpoint(0)).build()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("UD");
        }
    }
}
