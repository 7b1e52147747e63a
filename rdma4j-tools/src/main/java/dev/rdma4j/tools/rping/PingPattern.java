package dev.rdma4j.tools.rping;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * The ping data the C client writes before each ping: {@code "rdma-ping-%d: "} ({@code snprintf} into
 * the buffer) followed by printable characters from {@code 'A'} to {@code 'z'}, wrapping around, starting
 * one character later on each ping, with a NUL in the buffer's last byte.
 */
final class PingPattern {
    /** The first pattern character, {@code 'A'}. */
    static final int FIRST = 65;
    /** The last pattern character, {@code 'z'}. */
    static final int LAST = 122;

    private int start = FIRST;

    /**
     * The next ping's data.
     *
     * @param ping the ping's number (from 0)
     * @param size the buffer size ({@code -S}), at least {@link RpingOptions#MIN_SIZE}
     * @return {@code size} bytes
     */
    byte[] next(int ping, int size) {
        byte[] buf = new byte[size];
        byte[] prefix = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
        // snprintf stores at most size - 1 characters and returns the full length
        System.arraycopy(prefix, 0, buf, 0, Math.min(prefix.length, size - 1));
        int c = start;
        for (int i = prefix.length; i < size; i++) {
            buf[i] = (byte) c;
            c = c == LAST ? FIRST : c + 1;
        }
        start = start == LAST ? FIRST : start + 1;
        buf[size - 1] = 0;
        return buf;
    }

    /**
     * The C string at the start of a buffer, as {@code printf("%s")} prints it: up to the first NUL, and
     * never past the buffer's end.
     *
     * @param segment the buffer
     * @param limit   its usable length
     * @return the text (bytes as ISO-8859-1 characters)
     */
    static String cString(MemorySegment segment, int limit) {
        int n = strlen(segment, limit);
        byte[] b = new byte[n];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, 0, b, 0, n);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /**
     * {@code strlen}, bounded.
     *
     * @param segment the buffer
     * @param limit   its usable length
     * @return the bytes before the first NUL, or {@code limit} when there is none
     */
    static int strlen(MemorySegment segment, int limit) {
        int max = (int) Math.min(limit, segment.byteSize());
        for (int i = 0; i < max; i++) {
            if (segment.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return i;
            }
        }
        return max;
    }
}
