package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.RemoteRegion;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The short path's rdma_cm private data: none (the peer exposes no region) or exactly 20 bytes (address,
 * length, rkey). Anything else is not an rdma4j peer's, and is refused by name rather than read as no region
 * or as a region of negative length.
 */
class RegionPrivateDataTest {
    private static byte[] region(long address, long length, int rkey) {
        return ByteBuffer.allocate(20).putLong(address).putLong(length).putInt(rkey).array();
    }

    @Test
    void noneOrTwentyBytesAreAnRdma4jPeers() throws Exception {
        assertThat(RegionOffer.parse(new byte[0])).isNull();
        assertThat(RegionOffer.parse(region(0x7f0000001000L, 4096, 0x1234)))
                .isEqualTo(new RemoteRegion(0x7f0000001000L, 4096, 0x1234));
    }

    @Test
    void tooShortIsRefused() {
        assertThatThrownBy(() -> RegionOffer.parse(new byte[7])).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("7 bytes of private data").hasMessageContaining("none or 20");
    }

    @Test
    void tooLongIsRefused() {
        // e.g. a C client's 56 bytes of CM padding
        assertThatThrownBy(() -> RegionOffer.parse(new byte[56])).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("56 bytes of private data");
    }

    @Test
    void garbageIsRefused() {
        byte[] garbage = new byte[20];
        java.util.Arrays.fill(garbage, (byte) 0xff); // length -1
        assertThatThrownBy(() -> RegionOffer.parse(garbage)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("negative length");
        assertThatThrownBy(() -> RegionOffer.parse(region(0x1000, 0, 1)))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("empty region");
    }
}
