package dev.rdma4j.internal.ffi;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Field reads by C member name, for control-path decoding (hot paths precompute their offsets). */
final class Fields {
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Fields() {
    }

    static int u8(MemorySegment s, MemoryLayout l, String f) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, CLayouts.offset(l, f)));
    }

    static int u16(MemorySegment s, MemoryLayout l, String f) {
        return Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, CLayouts.offset(l, f)));
    }

    static int i32(MemorySegment s, MemoryLayout l, String f) {
        return s.get(ValueLayout.JAVA_INT, CLayouts.offset(l, f));
    }

    static long u32(MemorySegment s, MemoryLayout l, String f) {
        return Integer.toUnsignedLong(i32(s, l, f));
    }

    static long i64(MemorySegment s, MemoryLayout l, String f) {
        return s.get(ValueLayout.JAVA_LONG, CLayouts.offset(l, f));
    }

    /** A {@code __be64} member, returned in host order. */
    static long be64(MemorySegment s, MemoryLayout l, String f) {
        return s.get(BE64, CLayouts.offset(l, f));
    }

    static String string(MemorySegment s, MemoryLayout l, String f) {
        long off = CLayouts.offset(l, f);
        long size = l.select(MemoryLayout.PathElement.groupElement(f)).byteSize();
        return s.asSlice(off, size).getString(0);
    }

    /** A {@code __be64} returned by value (as the raw register bits) to host order. */
    static long be64ToHost(long raw) {
        return ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? raw : Long.reverseBytes(raw);
    }
}
