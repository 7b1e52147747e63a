package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: an offset or length outside its region is refused up front with an {@link IllegalArgumentException}
 * that names the argument and the values, never an {@link IndexOutOfBoundsException} from {@code MemorySegment}
 * (host test: batches, regions and headers encode without a device).
 */
class OutOfRangeArgumentsTest {
    private final MemoryRegion mr = MemoryRegion.unregistered(Arena.ofAuto().allocate(4096, 8), 1, 2);
    private final RemoteRegion remote = new RemoteRegion(0x10000, 4096, 3);

    @org.junit.jupiter.api.AfterEach
    void closeRegion() {
        mr.close(); // the leak detector reports a region collected without close()
    }

    private static void refused(ThrowingCallable call, String message) {
        assertThatThrownBy(call).isExactlyInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void everySendBatchFormNamesTheLocalRange() {
        try (SendBatch b = new SendBatch(4, 2, 64)) {
            refused(() -> b.send(1, mr, 4096, 1), "offset 4096 + length 1 exceeds the 4096 bytes of the region");
            refused(() -> b.send(1, mr, -8, 1), "offset must be >= 0: -8");
            refused(() -> b.send(1, mr, 0, -1), "negative length: -1");
            refused(() -> b.send(1, mr, Long.MAX_VALUE, 8),
                    "offset 9223372036854775807 + length 8 exceeds the 4096 bytes of the region");
            refused(() -> b.sendWithImmediate(1, mr, 4095, 2, 7),
                    "offset 4095 + length 2 exceeds the 4096 bytes of the region");
            refused(() -> b.write(1, mr, 1L << 40, 8, remote, 0),
                    "offset 1099511627776 + length 8 exceeds the 4096 bytes of the region");
            refused(() -> b.writeWithImmediate(1, mr, 0, 8, remote, 4089, 1),
                    "remoteOffset 4089 + length 8 exceeds the 4096 bytes of the remote region");
            refused(() -> b.read(1, mr, 0, 8, remote, -1), "remoteOffset must be >= 0: -1");
            refused(() -> b.read(1, mr, 4092, 8, remote, 0), "offset 4092 + length 8 exceeds the 4096 bytes of the region");
            refused(() -> b.compareAndSwap(1, mr, 4089, remote, 0, 1, 2),
                    "offset 4089 + length 8 exceeds the 4096 bytes of the region");
            refused(() -> b.fetchAndAdd(1, mr, 0, remote, 4096, 1),
                    "remoteOffset 4096 + length 8 exceeds the 4096 bytes of the remote region");
            refused(() -> b.writeInline(1, MemorySegment.ofArray(new byte[16]), remote, Long.MAX_VALUE),
                    "remoteOffset 9223372036854775807 + length 16 exceeds the 4096 bytes of the remote region");
            assertThat(b.count()).as("every refused call left the batch empty").isZero();
            b.send(1, mr, 0, 8);
            refused(() -> b.gather(mr, 4000, 100), "offset 4000 + length 100 exceeds the 4096 bytes of the region");
            assertThat(b.count()).isEqualTo(1);
            b.gather(mr, 4000, 96); // the edge fits
        }
    }

    @Test
    void receiveBatchesNameTheRange() {
        try (ReceiveBatch b = new ReceiveBatch(2, 2)) {
            refused(() -> b.receive(1, mr, 4097, 0), "offset 4097 + length 0 exceeds the 4096 bytes of the region");
            refused(() -> b.receive(1, mr, -1, 0), "offset must be >= 0: -1");
            b.receive(1, mr, 4096, 0); // an empty range at the end fits
            refused(() -> b.scatter(mr, 1, 4096), "offset 1 + length 4096 exceeds the 4096 bytes of the region");
            assertThat(b.count()).isEqualTo(1);
        }
    }

    @Test
    void regionSlicesNameTheRange() {
        refused(() -> mr.remote(8000, 500), "offset 8000 + size 500 exceeds the 4096 bytes of the region");
        refused(() -> mr.remote(0, -1), "size must be >= 0: -1");
        refused(() -> remote.slice(-5, 1), "offset must be >= 0: -5");
        refused(() -> remote.slice(1, Long.MAX_VALUE),
                "offset 1 + size 9223372036854775807 exceeds the 4096 bytes of the remote region");
        assertThat(remote.slice(4000, 96)).isEqualTo(new RemoteRegion(0x10000 + 4000, 96, 3));
        assertThat(mr.remote(4096, 0).length()).isZero();
    }

    @Test
    void globalRouteHeadersNameTheRange() {
        MemorySegment buffer = MemorySegment.ofArray(new byte[64]);
        refused(() -> GlobalRouteHeader.read(buffer, 30),
                "offset 30 + the header's length 40 exceeds the 64 bytes of the buffer");
        refused(() -> GlobalRouteHeader.read(buffer, -1), "offset must be >= 0: -1");
        assertThat(GlobalRouteHeader.read(buffer, 24)).isNotNull();
    }
}
