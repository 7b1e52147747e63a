package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 10: the opcode of a failed completion is undefined in C (rxe reports 0, {@code IBV_WC_SEND},
 * for a flushed receive), so the direction of a completion comes from rdma4j's own wr_id (its receive bit),
 * never from the opcode.
 */
@Tag("device")
class CompletionDirectionDeviceTest {

    @Test
    void aReceiveFlushedByTheErrorStateIsStillAReceive() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                ReceiveBatch rb = new ReceiveBatch(2, 1)) {
            lb.b.post(rb.receive(1, mr, 0, 64).receive(2, mr, 64, 64));
            lb.b.toError();
            List<WorkCompletion> flushed = lb.await(lb.cqB, 2);
            assertThat(flushed).extracting(WorkCompletion::status).containsOnly(WcStatus.WR_FLUSH_ERR);
            for (WorkCompletion c : flushed) {
                assertThat(c.opcode().isReceive()).as("opcode of %s", c).isTrue();
                assertThat(c.opcode()).isEqualTo(WcOpcode.RECV);
                assertThat(c.isReceive()).as("%s", c).isTrue();
                assertThat(c.buffer()).isNull(); // nothing was received
            }
        }
    }

    @Test
    void inPlaceAccessorsTellTheDirectionOfFailedAndSuccessfulCompletions() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                WorkCompletions wcs = new WorkCompletions(8)) {
            // successful: a send on a, its receive on b
            lb.b.postReceive(10, mr, 0, 64);
            lb.a.postSend(11, mr, 1024, 16);
            assertThat(pollOne(lb.cqB, wcs)).isEqualTo(10);
            assertThat(wcs.isSuccess(0)).isTrue();
            assertThat(wcs.isReceive(0)).isTrue();
            assertThat(wcs.opcode(0)).isEqualTo(WcOpcode.RECV);
            assertThat(pollOne(lb.cqA, wcs)).isEqualTo(11);
            assertThat(wcs.isReceive(0)).isFalse();
            assertThat(wcs.get(0).isReceive()).isFalse();
            assertThat(wcs.opcode(0)).isEqualTo(WcOpcode.SEND);

            // failed: a receive and a send flushed by ERROR, on the same CQ
            lb.a.postReceive(20, mr, 0, 64);
            lb.a.toError();
            lb.a.postSend(21, mr, 1024, 16); // posted in ERROR: flushed at once
            int seen = 0;
            long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
            while (seen < 2) {
                int n = lb.cqA.poll(wcs);
                for (int i = 0; i < n; i++, seen++) {
                    assertThat(wcs.status(i)).isEqualTo(WcStatus.WR_FLUSH_ERR);
                    boolean recv = wcs.wrId(i) == 20;
                    assertThat(wcs.isReceive(i)).as("wr_id %d", wcs.wrId(i)).isEqualTo(recv);
                    assertThat(wcs.opcode(i).isReceive()).as("opcode of wr_id %d", wcs.wrId(i)).isEqualTo(recv);
                    assertThat(wcs.get(i).isReceive()).isEqualTo(recv);
                }
                assertThat(System.nanoTime()).as("flush completions").isLessThan(deadline);
            }
        }
    }

    /**
     * {@link WorkCompletions#emptied()}: a poll that fills its batch may have left more; one that takes fewer than
     * the batch holds found the CQ empty (the engine's drain stops there, without a poll more for nothing). The three
     * receive completions are all in b's CQ before it is polled: the responder writes a receive's completion before
     * it acknowledges the send, and a's three send completions are awaited first.
     */
    @Test
    void aPollThatTakesFewerThanItsBatchHoldsSaysTheQueueWasEmptied() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion mr = lb.pd.allocate(4096, AccessFlag.LOCAL_WRITE);
                WorkCompletions two = new WorkCompletions(2)) {
            for (int i = 0; i < 3; i++) {
                lb.b.postReceive(30 + i, mr, 64L * i, 64);
            }
            for (int i = 0; i < 3; i++) {
                lb.a.postSend(40 + i, mr, 1024, 16);
            }
            assertThat(lb.await(lb.cqA, 3)).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
            assertThat(lb.cqB.poll(two)).isEqualTo(2);
            assertThat(two.emptied()).as("a full batch: more may wait").isFalse();
            assertThat(lb.cqB.poll(two)).isEqualTo(1);
            assertThat(two.emptied()).as("one of two: the CQ was empty").isTrue();
            assertThat(lb.cqB.poll(two)).isZero();
            assertThat(two.emptied()).as("none: empty").isTrue();
        }
    }

    private static long pollOne(CompletionQueue cq, WorkCompletions wcs) throws VerbsException {
        long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
        while (cq.poll(wcs) == 0) {
            assertThat(System.nanoTime()).as("a completion").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(wcs.count()).isEqualTo(1);
        return wcs.wrId(0);
    }
}
