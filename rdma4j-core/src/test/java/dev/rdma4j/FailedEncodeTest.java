package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * Issue 12 (hostile input): a failed encode left a half-built request in the batch (after {@code send()}
 * threw on a bad range, {@code count()} had grown, and the request without its SGE was posted and completed
 * SUCCESS). A failed call now leaves the batch as it was. And sizes whose product overflowed an int are
 * refused up front.
 */
class FailedEncodeTest {
    private final MemoryRegion mr = MemoryRegion.unregistered(Arena.ofAuto().allocate(4096, 8), 1, 2);
    private final RemoteRegion remote = new RemoteRegion(0x10000, 4096, 3);

    @org.junit.jupiter.api.AfterEach
    void closeRegion() {
        mr.close(); // the leak detector reports a region collected without close()
    }

    @Test
    void aSendBatchIsAsItWasAfterAFailedCall() {
        try (SendBatch b = new SendBatch(4, 1)) {
            b.send(1, mr, 0, 64);
            assertThatThrownBy(() -> b.send(2, mr, 4000, 200)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset 4000 + length 200 exceeds the 4096 bytes of the region");
            assertThat(b.count()).isEqualTo(1);
            assertThatThrownBy(() -> b.write(3, mr, 0, 8, remote, 5000)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("remoteOffset 5000 + length 8 exceeds the 4096 bytes of the remote region");
            assertThatThrownBy(() -> b.read(4, mr, -1, 8, remote, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset must be >= 0: -1");
            assertThatThrownBy(() -> b.sendTo(5, mr, 0, 8, null, 1, 1)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> b.fetchAndAdd(6, mr, 0, remote, 3, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> b.send(7, mr, 0, -1)).isInstanceOf(IllegalArgumentException.class);
            assertThat(b.count()).as("every failed call left the batch as it was").isEqualTo(1);
            b.send(8, mr, 64, 64).send(9, mr, 128, 64).send(10, mr, 192, 64);
            assertThat(b.count()).as("and it fills to its capacity").isEqualTo(4);
        }
    }

    @Test
    void setWrIdNamesAnEncodedRequestOnly() {
        try (SendBatch b = new SendBatch(2, 1); ReceiveBatch r = new ReceiveBatch(1, 1)) {
            assertThatThrownBy(() -> b.setWrId(0, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            b.send(1, mr, 0, 64);
            b.setWrId(0, 42);
            assertThat(b.wrIds[0]).isEqualTo(42);
            assertThatThrownBy(() -> b.setWrId(1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> b.setWrId(-1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(b.count()).isEqualTo(1);
            assertThatThrownBy(() -> r.setWrId(0, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void aReceiveBatchIsAsItWasAfterAFailedCall() {
        try (ReceiveBatch b = new ReceiveBatch(2, 1)) {
            b.receive(1, mr, 0, 64);
            assertThatThrownBy(() -> b.receive(2, mr, 4090, 64)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("offset 4090 + length 64 exceeds the 4096 bytes of the region");
            assertThat(b.count()).isEqualTo(1);
            b.receive(3, mr, 64, 64);
            assertThat(b.count()).isEqualTo(2);
        }
    }

    @Test
    void sizesBeyondAnyDeviceAreRefusedBeforeTheyOverflow() {
        assertThatThrownBy(() -> new SendBatch(65536, 65537)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most");
        assertThatThrownBy(() -> new ReceiveBatch(1 << 20, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
