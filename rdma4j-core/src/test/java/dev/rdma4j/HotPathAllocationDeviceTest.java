package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Posting and polling allocate nothing in steady state: measured with the JVM's per-thread allocation
 * counter around thousands of send/receive round trips (no timing involved).
 */
@Tag("device")
class HotPathAllocationDeviceTest {
    static volatile byte[] sink;

    @Test
    void postAndPollAllocateNothing() throws Exception {
        allocationOfRoundTrips(false);
    }

    /** The same through the extended posting API ({@code ibv_wr_*}, {@link QueuePairEx}). */
    @Test
    void extendedPostingAllocatesNothing() throws Exception {
        allocationOfRoundTrips(true);
    }

    private static void allocationOfRoundTrips(boolean extended) throws Exception {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Loopback lb = new Loopback(QpType.RC, q -> extended ? q.capacity(64, 64).extendedPosting()
                : q.capacity(64, 64)); MemoryRegion mr = lb.pd.allocate(1 << 16, AccessFlag.LOCAL_WRITE);
                SendBatch sb = new SendBatch(4, 1); ReceiveBatch rb = new ReceiveBatch(4, 1);
                WorkCompletions wcs = new WorkCompletions(16)) {
            QueuePairEx ex = extended ? QueuePairEx.of(lb.a) : null;
            roundTrips(lb, ex, mr, sb, rb, wcs, 2_000); // warm up: class loading, linking, JIT
            long tid = Thread.currentThread().threadId();
            long probe = threads.getThreadAllocatedBytes(tid);
            sink = new byte[100_000]; // positive control: the counter sees a known allocation
            assertThat(threads.getThreadAllocatedBytes(tid) - probe).isGreaterThanOrEqualTo(100_000);
            long before = threads.getThreadAllocatedBytes(tid);
            int n = 5_000;
            roundTrips(lb, ex, mr, sb, rb, wcs, n);
            long allocated = threads.getThreadAllocatedBytes(tid) - before;
            // Nothing per operation; a few hundred bytes of one-off noise (e.g. a deoptimisation) is tolerated.
            assertThat(allocated).as("bytes allocated by %d round trips", n).isLessThan(2048);
        }
    }

    private static void roundTrips(Loopback lb, QueuePairEx ex, MemoryRegion mr, SendBatch sb, ReceiveBatch rb,
            WorkCompletions wcs, int n) throws VerbsException {
        for (int i = 0; i < n; i++) {
            rb.clear().receive(i, mr, 4096, 64);
            if (lb.b.tryPost(rb) != 0) {
                throw new AssertionError("post recv");
            }
            sb.clear().send(i, mr, 0, 64);
            if ((ex != null ? ex.tryPost(sb) : lb.a.tryPost(sb)) != 0) {
                throw new AssertionError("post send");
            }
            int seen = 0;
            while (seen < 2) {
                int got = lb.cqA.poll(wcs);
                for (int k = 0; k < got; k++) {
                    if (!wcs.isSuccess(k) || wcs.wrId(k) != i) {
                        throw new AssertionError("bad send completion");
                    }
                }
                seen += got;
                got = lb.cqB.poll(wcs);
                for (int k = 0; k < got; k++) {
                    if (!wcs.isSuccess(k) || wcs.wrId(k) != i || wcs.byteLength(k) != 64) {
                        throw new AssertionError("bad receive completion");
                    }
                }
                seen += got;
            }
        }
    }
}
