package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 8: an SRQ server needed refill code of its own. A {@link ReceivePool} posts its buffers,
 * and reposts each one the application releases.
 */
@Tag("device")
class ReceivePoolDeviceTest {
    private static final int MESSAGES = 300;
    private static final int WINDOW = 8;

    /**
     * A pool owns its SRQ while open and gives it back when closed (the ownership outlived the pool before: the SRQ
     * refused its own user's posts for good); a new pool is refused while the closed one's receives are still posted.
     */
    @Test
    void aClosedPoolGivesTheSrqBack() throws Exception {
        try (Context ctx = TestDevice.device().open();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             MemoryRegion buffers = pd.allocate(64 * 64, AccessFlag.LOCAL_WRITE); // closed after the SRQ
             SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0)) {
            assertThat(srq.query().maxWr()).as("room for the whole SRQ in the region").isLessThanOrEqualTo(64);
            ReceivePool pool = ReceivePool.create(srq, buffers, 0, 64);
            assertThat(pool.size()).as("the whole SRQ").isEqualTo(srq.query().maxWr());
            assertThat(srq.owner()).contains("ReceivePool");
            assertThatThrownBy(() -> srq.armLimit(1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ReceivePool");
            assertThatThrownBy(() -> ReceivePool.create(srq, buffers, 0, 64))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("owned");
            pool.close();
            assertThat(srq.owner()).as("given back at the close").isNull();
            srq.armLimit(1);
            assertThat(srq.outstanding()).as("the closed pool's receives stay posted").isEqualTo(pool.size());
            assertThatThrownBy(() -> ReceivePool.create(srq, buffers, 0, 64))
                    .as("the closed pool's receives, still posted, would complete as the new pool's buffers")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("receives posted");
            assertThat(srq.owner()).as("not taken by the refused create").isNull();
            srq.armLimit(2);
        }
    }

    @Test
    void twoClientsSendThroughOnePoolWithNoRefillCode() throws Exception {
        try (Context ctx = TestDevice.device().open();
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionQueue serverCq = ctx.createCompletionQueue(128);
             CompletionQueue clientCq = ctx.createCompletionQueue(128);
             MemoryRegion buffers = pd.allocate(32 * 256, AccessFlag.LOCAL_WRITE);
             SharedReceiveQueue srq = pd.createSharedReceiveQueue(32, 1, 0);
             MemoryRegion out = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
             WorkCompletions wcs = new WorkCompletions(16);
             ReceivePool pool = ReceivePool.create(srq, buffers, 0, 256)) {
            assertThat(pool.size()).isEqualTo(Math.min(32, srq.query().maxWr()));
            assertThat(srq.outstanding()).isEqualTo(pool.size());
            QueuePair[] servers = new QueuePair[2];
            QueuePair[] clients = new QueuePair[2];
            try {
                for (int c = 0; c < 2; c++) {
                    servers[c] = QueuePair.builder(pd, QpType.RC).completionQueue(serverCq).sharedReceiveQueue(srq)
                            .build();
                    clients[c] = QueuePair.builder(pd, QpType.RC).completionQueue(clientCq).capacity(WINDOW, 1)
                            .build();
                    QpEndpoint es = servers[c].localEndpoint(10 + c);
                    QpEndpoint ec = clients[c].localEndpoint(20 + c);
                    servers[c].toInit();
                    clients[c].toInit();
                    servers[c].toRtr(RtrAttributes.builder(ec).build());
                    clients[c].toRtr(RtrAttributes.builder(es).build());
                    servers[c].toRts(RtsAttributes.builder(10 + c).build());
                    clients[c].toRts(RtsAttributes.builder(20 + c).rnrRetry(7).build());
                }
                int[] sent = new int[2];
                int[] inFlight = new int[2];
                int[] received = new int[2];
                long lastReleased = -1;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
                while (received[0] + received[1] < 2 * MESSAGES) {
                    assertThat(System.nanoTime()).as("received %d and %d", received[0], received[1])
                            .isLessThan(deadline);
                    for (int c = 0; c < 2; c++) {
                        while (sent[c] < MESSAGES && inFlight[c] < WINDOW) {
                            long slot = 8L * (c * WINDOW + sent[c] % WINDOW);
                            out.segment().set(ValueLayout.JAVA_INT, slot, c);
                            out.segment().set(ValueLayout.JAVA_INT, slot + 4, sent[c]);
                            clients[c].postSend(sent[c], out, slot, 8);
                            sent[c]++;
                            inFlight[c]++;
                        }
                    }
                    int n = clientCq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        assertThat(wcs.isSuccess(i)).isTrue();
                        inFlight[wcs.qpNumber(i) == clients[0].qpNumber() ? 0 : 1]--;
                    }
                    n = serverCq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        assertThat(wcs.isSuccess(i)).as("%s", wcs.get(i)).isTrue();
                        var data = pool.buffer(wcs.wrId(i));
                        int client = data.get(ValueLayout.JAVA_INT, 0);
                        assertThat(data.get(ValueLayout.JAVA_INT, 4)).as("in order from client %d", client)
                                .isEqualTo(received[client]);
                        received[client]++;
                        pool.release(wcs.wrId(i)); // the only "refill code"
                        lastReleased = wcs.wrId(i);
                    }
                }
                assertThat(pool.waiting()).isZero();
                assertThat(srq.outstanding()).as("every buffer posted again").isEqualTo(pool.size());
                assertThatThrownBy(() -> pool.release(pool.size())).isInstanceOf(IllegalArgumentException.class);
                long stale = lastReleased;
                assertThatThrownBy(() -> pool.release(stale)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("already released");
                assertThat(srq.outstanding()).isEqualTo(pool.size());
            } finally {
                for (QueuePair q : servers) {
                    if (q != null) {
                        q.close();
                    }
                }
                for (QueuePair q : clients) {
                    if (q != null) {
                        q.close();
                    }
                }
            }
        }
    }
}
