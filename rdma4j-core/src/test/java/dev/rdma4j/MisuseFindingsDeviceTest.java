package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.internal.QpVerbs;
import dev.rdma4j.internal.ffi.Codec;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The misuse fuzzer's remaining findings of issue 29 that need a device: a refused post of a closed batch kept
 * queue room for good (1), a queue pair whose Java side failed after {@code ibv_create_qp} leaked the native QP
 * and kept its CQ and SRQ open (4), and exceptions that were not rdma4j's own (5).
 */
@Tag("device")
class MisuseFindingsDeviceTest {

    // ---------------------------------------------------------------- 1: closed batches take no queue room

    @Test
    void aClosedReceiveBatchIsRefusedWithoutTakingQueueRoom() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(64);
                MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
            QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(4, 7).build();
            try {
                qp.toInit();
                ReceiveBatch rb = new ReceiveBatch(1, 1);
                rb.receive(7, mr, 0, 8);
                rb.close();
                for (int i = 0; i < 2; i++) {
                    assertThatThrownBy(() -> qp.post(rb)).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("ReceiveBatch").hasMessageContaining("closed");
                    assertThatThrownBy(() -> qp.tryPost(rb)).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("ReceiveBatch");
                }
                assertThat(qp.outstandingReceives()).isZero();
                // the whole queue is still there
                int depth = qp.capabilities().maxRecvWr();
                for (int i = 0; i < depth; i++) {
                    qp.postReceive(i, mr, 8L * i, 8);
                }
                assertThat(qp.outstandingReceives()).isEqualTo(depth);
            } finally {
                qp.close();
            }
        }
    }

    @Test
    void aClosedSendBatchIsRefusedWithoutTakingQueueRoom() throws Exception {
        try (Loopback l = new Loopback(QpType.RC, q -> q.capacity(3, 4));
                MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
            SendBatch sb = new SendBatch(1, 1);
            sb.send(1, mr, 0, 8);
            sb.close();
            int depth = l.a.capabilities().maxSendWr();
            for (int i = 0; i < depth + 1; i++) {
                assertThatThrownBy(() -> l.a.post(sb)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("SendBatch").hasMessageContaining("closed");
            }
            // a full queue's worth of sends still goes: the refusals kept no slot
            for (int i = 0; i < depth; i++) {
                l.b.postReceive(i, mr, 8L * i, 8);
            }
            try (SendBatch all = new SendBatch(depth, 1)) {
                for (int i = 0; i < depth; i++) {
                    all.send(100 + i, mr, 0, 0);
                    if (i < depth - 1) {
                        all.unsignaled();
                    }
                }
                assertThat(l.a.tryPost(all)).as("posting %d sends after the refusals", depth).isZero();
            }
            l.a.close(); // forgets the posted requests, which pin the region closed next
            l.b.close();
        }
    }

    @Test
    void aClosedBatchPostedToAnSrqTakesNoSlot() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1, 0)) {
            ReceiveBatch rb = new ReceiveBatch(1, 1);
            rb.receive(7, mr, 0, 8);
            rb.close();
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> srq.post(rb)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("ReceiveBatch").hasMessageContaining("closed");
            }
            assertThat(srq.outstanding()).isZero();
        }
    }

    // ---------------------------------------------------------------- 4: nothing native outlives a failed build

    /**
     * A provider whose granted capabilities cannot be right (here {@code cap.max_send_sge} = 0xfffffff5, -11 as a
     * signed int, written over the real answer after {@code ibv_create_qp} returned): the build used to throw
     * {@code NegativeArraySizeException} from the ring's constructor, with the native QP made and never destroyed,
     * so its CQ and SRQ could not close ("still used by QueuePair(UD)"). Now it is refused with a
     * {@link VerbsException}, and the QP is destroyed before the exception leaves.
     */
    @Test
    void implausibleGrantedCapabilitiesAreRefusedAndTheNativeQpDestroyed() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            long before = rxeQps(ctx.device().name());
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1, 0);
            QueuePairBuilder b = QueuePair.builder(pd, QpType.UD).completionQueue(cq).sharedReceiveQueue(srq);
            QpVerbs lying = new QpVerbs() {
                @Override
                public MemorySegment create(MemorySegment pdHandle, MemorySegment initAttr) throws java.io.IOException {
                    MemorySegment qp = ResourceVerbs.createQp(pdHandle, initAttr);
                    Codec.put(initAttr, Codec.qpInitAttr(), "cap.max_send_sge", 0xfffffff5L);
                    return qp;
                }

                @Override
                public void destroy(MemorySegment qp) throws java.io.IOException {
                    ResourceVerbs.destroyQp(qp);
                }
            };
            assertThatThrownBy(() -> b.build(lying)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("max_send_sge").hasMessageContaining("4294967285");
            assertThat(rxeQps(ctx.device().name())).as("rxe QPs after the refused build").isEqualTo(before);
            srq.close();
            cq.close();
            pd.close();
        }
    }

    /**
     * Whatever fails once the native QP exists (here the builder's test hook, run after the rings and the one-request
     * batches are made) destroys the QP before the exception leaves: its CQ, SRQ and PD close, no rxe QP remains.
     */
    @Test
    void aFailureAfterTheNativeQpExistsDestroysIt() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            long before = rxeQps(ctx.device().name());
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1, 0);
            for (QpType type : QpType.values()) {
                QueuePairBuilder b = QueuePair.builder(pd, type).completionQueue(cq).sharedReceiveQueue(srq);
                IllegalStateException boom = new IllegalStateException("the Java side failed");
                b.afterCreate = () -> {
                    assertThat(uncheckedRxeQps(ctx.device().name())).as("the native QP exists").isEqualTo(before + 1);
                    throw boom;
                };
                assertThatThrownBy(b::build).isSameAs(boom);
                assertThat(rxeQps(ctx.device().name())).as("rxe QPs after the failed %s build", type)
                        .isEqualTo(before);
            }
            srq.close();
            cq.close();
            pd.close();
        }
    }

    private static long uncheckedRxeQps(String device) {
        try {
            return rxeQps(device);
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * With a shared receive queue the QP has no receive queue of its own, and rxe neither checks nor sets the
     * receive capacities then: it hands back what the caller asked for. A ring sized from that (2^31 - 1 receives)
     * was an {@code OutOfMemoryError} (and a leaked QP); the receive capacities of such a QP are 0.
     */
    @Test
    void aQueuePairOnAnSrqHasNoReceiveRingWhateverItsReceiveCapacity() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(16);
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1, 0)) {
            try (QueuePair qp = QueuePair.builder(pd, QpType.UD).completionQueue(cq).sharedReceiveQueue(srq)
                    .capacity(4, Integer.MAX_VALUE).maxSge(1, 1000).build()) {
                assertThat(qp.capabilities().maxRecvWr()).isZero();
                assertThat(qp.capabilities().maxRecvSge()).isZero();
                assertThat(qp.capabilities().maxSendWr()).isGreaterThanOrEqualTo(4);
            }
        }
    }

    /** The kernel's count of QPs on the device ({@code rdma -j resource show}). */
    static long rxeQps(String device) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "-j", "resource", "show").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("rdma -j resource show: %s", out).isZero();
        Matcher dev = Pattern.compile("\\{[^}]*\"ifname\":\"" + Pattern.quote(device) + "\"[^}]*}").matcher(out);
        assertThat(dev.find()).as("no %s in: %s", device, out).isTrue();
        Matcher qp = Pattern.compile("\"qp\":(\\d+)").matcher(dev.group());
        assertThat(qp.find()).as("no qp count in: %s", out).isTrue();
        return Long.parseLong(qp.group(1));
    }

    // ---------------------------------------------------------------- 5: rdma4j's own exceptions

    @Test
    void aUdQueuePairRefusesRdmaAsSuch() throws Exception {
        try (Loopback l = new Loopback(QpType.UD); MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                SendBatch sb = new SendBatch(1, 1)) {
            RemoteRegion remote = new RemoteRegion(mr.address(), 4096, mr.rkey());
            sb.write(1, mr, 0, 8, remote, 0);
            assertThatThrownBy(() -> l.a.post(sb)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("UD queue pairs have no RDMA read or write");
            sb.clear().read(2, mr, 0, 8, remote, 0);
            assertThatThrownBy(() -> l.a.post(sb)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("UD queue pairs have no RDMA read or write");
            sb.clear().send(3, mr, 0, 8);
            assertThatThrownBy(() -> l.a.post(sb)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("UD sends need an address handle");
        }
    }

    @Test
    void pollingIntoClosedCompletionsNamesThem() throws Exception {
        try (Context ctx = TestDevice.device().open(); CompletionQueue cq = ctx.createCompletionQueue(16)) {
            WorkCompletions wcs = new WorkCompletions(4);
            wcs.close();
            assertThatThrownBy(() -> cq.poll(wcs)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("WorkCompletions").hasMessageContaining("closed");
        }
    }
}
