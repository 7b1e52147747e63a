package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: a post that is refused (by the Java checks or by {@code ibv_post_recv}) leaves nothing behind:
 * {@link QueuePair#outstandingReceives()} was once reported as 1 after a refused post. Also the device-side
 * entry points of out-of-range offsets ({@link OutOfRangeArgumentsTest} has the host ones).
 */
@Tag("device")
class RefusedPostDeviceTest {

    @Test
    void aRefusedReceivePostLeavesNoOutstandingReceive() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(64); WorkCompletions wcs = new WorkCompletions(16);
                MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
            QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(4, 4).maxSge(1, 1).build();
            try {
                int depth = qp.capabilities().maxRecvWr();
                // RESET: refused by rdma4j before the provider, and by the provider's own check (tryPost of a
                // one-request batch goes the same way)
                assertThatThrownBy(() -> qp.postReceive(1, mr, 0, 64)).isInstanceOf(VerbsException.class)
                        .hasMessageContaining("RESET");
                assertThat(qp.outstandingReceives()).isZero();
                qp.toInit();
                // more receives than the queue holds
                try (ReceiveBatch big = new ReceiveBatch(depth + 1, 1)) {
                    for (int i = 0; i <= depth; i++) {
                        big.receive(i, mr, 0, 8);
                    }
                    assertThatThrownBy(() -> qp.post(big)).isInstanceOf(VerbsException.class)
                            .hasMessageContaining("receive queue full");
                    assertThat(big.failedIndex()).isZero();
                }
                assertThat(qp.outstandingReceives()).isZero();
                // more scatter entries than the QP takes (the second request of the chain)
                try (ReceiveBatch sges = new ReceiveBatch(2, qp.capabilities().maxRecvSge() + 1)) {
                    sges.receive(1, mr, 0, 8);
                    sges.receive(2, mr, 8, 8);
                    for (int k = 0; k < qp.capabilities().maxRecvSge(); k++) {
                        sges.scatter(mr, 16 + 8L * k, 8);
                    }
                    assertThat(qp.tryPost(sges)).isEqualTo(22);
                    assertThat(sges.failedIndex()).isEqualTo(1);
                }
                assertThat(qp.outstandingReceives()).isZero();
                // a range outside the region
                assertThatThrownBy(() -> qp.postReceive(2, mr, 4090, 64)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset 4090 + length 64 exceeds the 4096 bytes of the region");
                assertThat(qp.outstandingReceives()).isZero();
                // a region closed between encoding and posting
                try (ReceiveBatch b = new ReceiveBatch(1, 1)) {
                    MemoryRegion gone = pd.allocate(64, AccessFlag.LOCAL_WRITE);
                    b.receive(3, gone, 0, 64);
                    gone.close();
                    assertThatThrownBy(() -> qp.post(b)).isInstanceOf(IllegalStateException.class);
                }
                assertThat(qp.outstandingReceives()).isZero();
                // the counter does count: an accepted post is outstanding until its (flush) completion
                qp.postReceive(4, mr, 0, 64);
                assertThat(qp.outstandingReceives()).isEqualTo(1);
                qp.toError();
                long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
                int got = 0;
                while (got == 0) {
                    got = cq.poll(wcs);
                    assertThat(System.nanoTime()).as("the flush completion").isLessThan(deadline);
                }
                assertThat(wcs.wrId(0)).isEqualTo(4);
                assertThat(wcs.status(0)).isEqualTo(WcStatus.WR_FLUSH_ERR);
                assertThat(qp.outstandingReceives()).isZero();
                // RESET again, from ERROR: refused once more
                qp.reset();
                assertThatThrownBy(() -> qp.postReceive(5, mr, 0, 64)).isInstanceOf(VerbsException.class);
                assertThat(qp.outstandingReceives()).isZero();
            } finally {
                qp.close();
            }
            // after close
            assertThatThrownBy(() -> qp.postReceive(6, mr, 0, 64)).isInstanceOf(IllegalStateException.class);
            assertThat(qp.outstandingReceives()).isZero();
        }
    }

    @Test
    void aRefusedAsyncReceiveGivesItsRoomBack() throws Exception {
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = engine.createCompletionQueue(ctx, 64);
                MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
            QueuePair qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(4, 4).build();
            try {
                AsyncQueuePair aq = engine.wrap(qp);
                int room = aq.receiveRoom();
                // in RESET the provider's refusal fails the future
                assertThatThrownBy(() -> aq.receiveAsync(mr, 0, 64).get(60, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(VerbsException.class);
                assertThat(qp.outstandingReceives()).isZero();
                assertThat(aq.receiveRoom()).isEqualTo(room);
                qp.toInit();
                assertThatThrownBy(() -> aq.receiveAsync(mr, -1, 64).get(60, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset must be >= 0: -1");
                assertThatThrownBy(() -> aq.blocking(Duration.ofSeconds(60)).receive(mr, 4000, 97))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset 4000 + length 97 exceeds the 4096 bytes of the region");
                assertThat(qp.outstandingReceives()).isZero();
                assertThat(aq.receiveRoom()).isEqualTo(room);
                assertThatThrownBy(() -> aq.blocking(Duration.ofSeconds(60)).send(mr, 0, 4097))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset 0 + length 4097 exceeds the 4096 bytes of the region");
                assertThatThrownBy(() -> aq.blocking(Duration.ofSeconds(60)).write(mr, 0, 8, mr.remote(), 4092))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("remoteOffset 4092 + length 8 exceeds the 4096 bytes of the remote region");
                assertThatThrownBy(() -> aq.receiveStream(mr, 4000, 64, 2))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset 4000 + size 128 exceeds the 4096 bytes of the region");
            } finally {
                qp.close();
            }
        }
    }

    @Test
    void postsOfTheQueuePairAndTheSrqNameTheRange() throws Exception {
        try (Loopback l = new Loopback(QpType.RC); MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                SharedReceiveQueue srq = l.pd.createSharedReceiveQueue(8, 1, 0)) {
            assertThatThrownBy(() -> l.a.postSend(1, mr, 4096, 1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset 4096 + length 1 exceeds the 4096 bytes of the region");
            assertThatThrownBy(() -> l.a.postReceive(1, mr, Long.MIN_VALUE, 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset must be >= 0: -9223372036854775808");
            assertThatThrownBy(() -> srq.postReceive(1, mr, 1, 4096)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset 1 + length 4096 exceeds the 4096 bytes of the region");
            assertThat(srq.outstanding()).isZero();
            assertThat(l.a.outstandingReceives()).isZero();
            l.b.postReceive(3, mr, 0, 64);
            l.a.postSend(2, mr, 0, 0); // the QPs still work
            assertThat(l.awaitOne(l.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(l.awaitOne(l.cqB).wrId()).isEqualTo(3);
        }
    }
}
