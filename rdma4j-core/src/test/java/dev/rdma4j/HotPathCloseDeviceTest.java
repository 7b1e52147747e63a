package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The hot calls (poll, the posts of a QP and an SRQ, their one-request shortcuts) check a flag under their lock
 * instead of acquiring the life-cycle counter: after a close each is refused with {@code ... is closed}, before
 * any native call, and a close with such calls racing it is {@link CloseStarvationDeviceTest}'s. Here every one
 * of them, after the close, on the device.
 */
@Tag("device")
class HotPathCloseDeviceTest {
    @Test
    void everyHotCallAfterItsObjectClosedIsRefusedAsClosed() throws Exception {
        try (Loopback l = new Loopback(QpType.RC);
             MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
             SendBatch send = new SendBatch(1, 1);
             ReceiveBatch recv = new ReceiveBatch(1, 1)) {
            send.write(1, mr, 0, 64, mr.remote(), 1024);
            recv.receive(2, mr, 2048, 64);
            assertThat(l.a.tryPost(send)).as("a write before the close").isZero();
            assertThat(l.awaitOne(l.cqA).isSuccess()).isTrue();

            l.a.close();
            assertThatThrownBy(() -> l.a.tryPost(send)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("QueuePair.* is closed");
            assertThatThrownBy(() -> l.a.tryPost(recv)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("QueuePair.* is closed");
            assertThatThrownBy(() -> l.a.postSend(3, mr, 0, 64)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("QueuePair.* is closed");
            assertThatThrownBy(() -> l.a.postReceive(4, mr, 0, 64)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("QueuePair.* is closed");

            l.cqA.close(); // its only QP is gone
            assertThatThrownBy(() -> l.cqA.poll(l.wcs)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("CompletionQueue.* is closed");

            SharedReceiveQueue srq = l.pd.createSharedReceiveQueue(8, 1, 0);
            assertThat(srq.tryPost(recv)).as("a receive before the close").isZero();
            srq.close(); // an SRQ may close with receives posted: they are forgotten
            assertThatThrownBy(() -> srq.tryPost(recv)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("SharedReceiveQueue.* is closed");
            assertThatThrownBy(() -> srq.postReceive(5, mr, 0, 64)).isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("SharedReceiveQueue.* is closed");
        }
    }
}
