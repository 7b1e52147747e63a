package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 10: inline sends and writes from memory that is not registered (a heap array, a confined
 * arena closed right after the post), since {@code IBV_SEND_INLINE} copies the bytes at post time and the
 * provider ignores the lkey.
 */
@Tag("device")
class InlineSendDeviceTest {

    @Test
    void inlineSendsAndWritesFromUnregisteredMemoryArrive() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC, q -> q.maxInlineData(64));
                MemoryRegion dst = lb.pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
                SendBatch sb = new SendBatch(4, 1, lb.a.capabilities().maxInlineData())) {
            int maxInline = lb.a.capabilities().maxInlineData();
            assertThat(maxInline).isGreaterThanOrEqualTo(64);
            lb.b.postReceive(1, dst, 0, 256);
            lb.b.postReceive(2, dst, 256, 256);

            byte[] hello = "hello from the heap".getBytes(StandardCharsets.US_ASCII);
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment word = confined.allocateFrom(ValueLayout.JAVA_LONG, 0x0123456789abcdefL);
                lb.a.post(sb.sendInline(10, MemorySegment.ofArray(hello)).unsignaled()
                        .writeInline(11, word, dst.remote(), 1024).unsignaled()
                        .sendInline(12, MemorySegment.ofArray(new byte[] {42})));
            } // the arena is gone: the provider copied the bytes when they were posted
            hello[0] = 'J';

            assertThat(lb.awaitOne(lb.cqA).wrId()).isEqualTo(12);
            List<WorkCompletion> r = lb.await(lb.cqB, 2);
            assertThat(r).extracting(WorkCompletion::wrId).containsExactly(1L, 2L);
            assertThat(new String(r.get(0).buffer().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII))
                    .isEqualTo("hello from the heap");
            assertThat(r.get(1).buffer().toArray(ValueLayout.JAVA_BYTE)).containsExactly(42);
            assertThat(dst.segment().get(ValueLayout.JAVA_LONG, 1024)).isEqualTo(0x0123456789abcdefL);

            // the one-request shortcut, checked against the QP's max_inline_data
            lb.b.postReceive(3, dst, 512, 256);
            lb.a.postSendInline(13, MemorySegment.ofArray(new byte[maxInline]));
            assertThat(lb.awaitOne(lb.cqA).wrId()).isEqualTo(13);
            assertThat(lb.awaitOne(lb.cqB).byteLength()).isEqualTo(maxInline);
            assertThatThrownBy(() -> lb.a.postSendInline(14, MemorySegment.ofArray(new byte[maxInline + 1])))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_inline_data");
        }
    }

    @Test
    void aBatchWithMoreInlineBytesThanTheQueuePairAllowsIsRefusedAtPost() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC, q -> q.maxInlineData(16));
                SendBatch sb = new SendBatch(2, 1, 4096)) {
            int maxInline = lb.a.capabilities().maxInlineData();
            sb.sendInline(1, MemorySegment.ofArray(new byte[maxInline + 1]));
            assertThatThrownBy(() -> lb.a.post(sb)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.errno()).isEqualTo(22);
                assertThat(e.getMessage()).contains("inline bytes").contains("allows " + maxInline);
            });
        }
    }
}
