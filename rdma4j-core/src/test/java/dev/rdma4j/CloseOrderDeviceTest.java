package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 5: close errors name what is still open (kind and number, and where it was created when
 * creation tracking is on), posted work requests pinning a region are counted apart, and the natural
 * try-with-resources order (engine opened first, so closed after the context) works.
 */
@Tag("device")
@SuppressWarnings("try") // resources opened for their close order only
class CloseOrderDeviceTest {

    @Test
    void aRefusedCloseNamesTheObjectsAndThePostedWorkRequests() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(8);
            MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
            QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).build();
            qp.toInit();
            qp.postReceive(1, mr, 0, 64);
            qp.postReceive(2, mr, 64, 64);

            assertThatThrownBy(ctx::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cannot close Context(" + ctx.device().name() + ")")
                    .hasMessageContaining("still used by 2 open object(s)")
                    .hasMessageContaining("ProtectionDomain(").hasMessageContaining("CompletionQueue(")
                    .hasMessageNotContaining("posted work request");
            assertThatThrownBy(pd::close).hasMessageContaining("QueuePair(RC) #" + qp.qpNumber())
                    .hasMessageContaining("MemoryRegion(4096 bytes");
            assertThatThrownBy(cq::close).hasMessageContaining("still used by 1 open object(s): QueuePair(RC) #"
                    + qp.qpNumber());
            assertThatThrownBy(mr::close).hasMessageContaining("cannot close MemoryRegion(4096 bytes")
                    .hasMessageContaining("pinned by 2 posted work request(s)")
                    .hasMessageNotContaining("open object");

            qp.close(); // forgets its receives: the region is free
            mr.close();
            cq.close();
            pd.close();
        }
    }

    @Test
    void withCreationTrackingTheMessageSaysWhereEachObjectWasCreated() throws Exception {
        LeakDetection.Level was = LeakDetection.level();
        try (Context ctx = TestDevice.device().open()) {
            LeakDetection.setLevel(LeakDetection.Level.PARANOID);
            ProtectionDomain pd;
            try {
                pd = ctx.allocateProtectionDomain();
            } finally {
                LeakDetection.setLevel(was);
            }
            assertThatThrownBy(ctx::close).hasMessageContaining("ProtectionDomain(" + ctx.device().name()
                    + ") created at dev.rdma4j.CloseOrderDeviceTest.withCreationTrackingTheMessageSaysWhereEachObject"
                    + "WasCreated(CloseOrderDeviceTest.java:");
            pd.close();
        }
    }

    /**
     * The engine is opened first and closed last, as try-with-resources does it: its completion channel
     * (a child of the context) is idle once its CQs are closed, and must not stop the context from closing.
     */
    @Test
    void theNaturalTryWithResourcesOrderClosesTheContextBeforeTheEngine() throws Exception {
        Context closed;
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("close-order").build()) {
            try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                    CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
                    MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
                    AsyncQueuePair aq = engine.wrap(QueuePair.builder(pd, QpType.RC).completionQueue(cq).build())) {
                assertThat(aq.queuePair().isClosed()).isFalse();
                closed = ctx;
            } // closes aq, mr, cq, pd, then the context with the engine's channel still open: refused before
            assertThat(closed.isClosed()).isTrue();

            // the engine still works for another context
            try (Context ctx = TestDevice.device().open(); CompletionQueue cq = engine.createCompletionQueue(ctx, 4)) {
                assertThat(cq.isClosed()).isFalse();
            }
        }
    }

    @Test
    void aContextWithAnOpenEngineQueueIsRefusedAndNamesIt() throws Exception {
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("close-order-2").build();
                Context ctx = TestDevice.device().open()) {
            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
            assertThatThrownBy(ctx::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("CompletionQueue(" + ctx.device().name());
            assertThat(ctx.isClosed()).isFalse();
            cq.close();
        }
    }
}
