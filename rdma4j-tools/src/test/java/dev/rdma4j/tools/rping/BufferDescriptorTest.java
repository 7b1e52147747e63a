package dev.rdma4j.tools.rping;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@code struct rping_rdma_info} on the wire: buf, rkey, size, big-endian. */
class BufferDescriptorTest {
    @Test
    void encodesInNetworkByteOrder() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(BufferDescriptor.BYTES);
            new BufferDescriptor(0x0102030405060708L, 0x090a0b0c, 64).encode(s, 0);
            assertThat(s.toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0,
                    0, 64);
            assertThat(BufferDescriptor.decode(s, 0)).isEqualTo(new BufferDescriptor(0x0102030405060708L,
                    0x090a0b0c, 64));
        }
    }

    @Test
    void remoteRegionCoversWhatIsAccessed() {
        BufferDescriptor d = new BufferDescriptor(0xffff_8000_0000_1000L, 0x1234, 64);
        assertThat(d.remote(17).address()).isEqualTo(0xffff_8000_0000_1000L);
        assertThat(d.remote(17).length()).isEqualTo(17);
        assertThat(d.remote(17).rkey()).isEqualTo(0x1234);
    }
}
