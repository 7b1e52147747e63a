package dev.rdma4j.tools.rping;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The ping data against lines the C rping (rdma-core 44) printed on Soft-RoCE. */
class PingPatternTest {
    private static String text(byte[] data) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(data.length);
            MemorySegment.copy(data, 0, s, ValueLayout.JAVA_BYTE, 0, data.length);
            return PingPattern.cString(s, data.length);
        }
    }

    @Test
    void defaultSizeMatchesTheCTool() {
        PingPattern p = new PingPattern();
        assertThat(text(p.next(0, 64))).isEqualTo("rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
        assertThat(text(p.next(1, 64))).isEqualTo("rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrs");
        assertThat(text(p.next(2, 64))).isEqualTo("rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrst");
    }

    @Test
    void smallSizeMatchesTheCTool() {
        PingPattern p = new PingPattern();
        assertThat(text(p.next(0, 30))).isEqualTo("rdma-ping-0: ABCDEFGHIJKLMNOP");
        assertThat(text(p.next(1, 30))).isEqualTo("rdma-ping-1: BCDEFGHIJKLMNOPQ");
    }

    @Test
    void bufferEndsWithNulAndPatternWraps() {
        PingPattern p = new PingPattern();
        byte[] last = null;
        for (int ping = 0; ping <= 58; ping++) {
            last = p.next(ping, 100);
            assertThat(last[99]).isZero();
            assertThat(text(last)).hasSize(99);
        }
        // 58 pings later the start is back at 'A'; within a buffer 'z' is followed by 'A'
        assertThat(text(last)).startsWith("rdma-ping-58: ABC");
        assertThat(new String(new PingPattern().next(0, 23), StandardCharsets.US_ASCII))
                .isEqualTo("rdma-ping-0: ABCDEFGHI\0");
        String body = text(last).substring("rdma-ping-58: ".length());
        assertThat(body.indexOf("zA")).isEqualTo('z' - 'A');
    }

    @Test
    void minimumSizeHoldsTheLongestPrefix() {
        byte[] b = new PingPattern().next(Integer.MAX_VALUE, RpingOptions.MIN_SIZE);
        assertThat(text(b)).isEqualTo("rdma-ping-2147483647: ");
    }

    @Test
    void cStringStopsAtTheLimitWithoutNul() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(4);
            s.fill((byte) 'x');
            assertThat(PingPattern.cString(s, 4)).isEqualTo("xxxx");
            assertThat(PingPattern.strlen(s, 3)).isEqualTo(3);
        }
    }
}
