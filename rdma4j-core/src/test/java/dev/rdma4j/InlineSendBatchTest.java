package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 10: an inline send ({@code IBV_SEND_INLINE}) does not need a registered region, since the
 * provider copies the bytes at post time and ignores the lkey. Encoded on the host (no device needed).
 */
class InlineSendBatchTest {
    private static final RemoteRegion PEER = new RemoteRegion(0x10000, 4096, 0x1234);

    @Test
    void inlineDataComesFromAnyMemorySegmentAndIsCopiedAtOnce() {
        byte[] heap = "hello, inline".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        try (SendBatch b = new SendBatch(4, 1, 64)) {
            b.sendInline(7, MemorySegment.ofArray(heap));
            heap[0] = 'J'; // copied when encoded: the caller's memory is free again at once
            assertThat(b.count()).isEqualTo(1);
            assertThat(b.isInline(0)).isTrue();
            assertThat(b.bytes[0]).isEqualTo(heap.length);
            assertThat(b.sgeCounts[0]).isEqualTo(1);
            assertThat(b.firstRegions[0]).isNull(); // no region to pin
            assertThat(b.refCounts[0]).isZero();
            assertThat(new String(b.inlineBytes(0), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("hello, inline");

            try (Arena arena = Arena.ofConfined()) { // a closeable arena is fine too: nothing keeps its address
                MemorySegment native8 = arena.allocate(8);
                native8.fill((byte) 5);
                b.writeInline(8, native8, PEER, 16);
            }
            assertThat(b.count()).isEqualTo(2);
            assertThat(b.isInline(1)).isTrue();
            assertThat(b.inlineBytes(1)).containsOnly(5);
        }
    }

    @Test
    void dataLongerThanTheBatchsInlineRoomIsRefused() {
        try (SendBatch b = new SendBatch(2, 1, 16); SendBatch noRoom = new SendBatch(2, 1)) {
            assertThatThrownBy(() -> b.sendInline(1, MemorySegment.ofArray(new byte[17])))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("17 bytes")
                    .hasMessageContaining("16");
            assertThat(b.count()).isZero();
            assertThatThrownBy(() -> noRoom.sendInline(1, MemorySegment.ofArray(new byte[1])))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("new SendBatch(capacity, maxSge, maxInlineData)");
            assertThatThrownBy(() -> b.writeInline(1, MemorySegment.ofArray(new byte[8]), PEER, 4090))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("remoteOffset 4090 + length 8 exceeds the 4096 bytes of the remote region");
            assertThatThrownBy(() -> new SendBatch(2, 1, -1)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void encodingInlineRequestsAllocatesNothing() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemorySegment data = MemorySegment.ofArray(new byte[48]);
        try (SendBatch b = new SendBatch(4, 1, 64)) {
            for (int i = 0; i < 20_000; i++) { // warm up
                encode(b, data, i);
            }
            long tid = Thread.currentThread().threadId();
            long before = threads.getThreadAllocatedBytes(tid);
            for (int i = 0; i < 100_000; i++) {
                encode(b, data, i);
            }
            assertThat(threads.getThreadAllocatedBytes(tid) - before).as("bytes allocated").isLessThan(2048);
        }
    }

    private static void encode(SendBatch b, MemorySegment data, int i) {
        b.clear().sendInline(i, data).writeInline(i, data, PEER, 0).unsignaled();
    }
}
