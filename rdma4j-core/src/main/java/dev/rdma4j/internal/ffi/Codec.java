package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.Structs.IBV_AH_ATTR;
import static dev.rdma4j.internal.ffi.Structs.IBV_QP_ATTR;
import static dev.rdma4j.internal.ffi.Structs.IBV_QP_INIT_ATTR;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * Typed access to the control-path structs by C member path ("cap.max_send_wr",
 * "ah_attr.grh.dgid"): the API layer says which C member it sets, this class knows where it is.
 * Offsets are resolved once per (struct, path) and cached.
 */
public final class Codec {
    private static final Map<String, Long> OFFSETS = new java.util.concurrent.ConcurrentHashMap<>();

    private Codec() {
    }

    private static long at(MemoryLayout l, String path) {
        return OFFSETS.computeIfAbsent(l.name().orElseThrow() + "." + path,
                k -> CLayouts.offset(l, path.split("\\.")));
    }

    private static MemoryLayout member(MemoryLayout l, String path) {
        MemoryLayout m = l;
        for (String p : path.split("\\.")) {
            m = ((java.lang.foreign.GroupLayout) m).memberLayouts().stream()
                    .filter(x -> x.name().filter(p::equals).isPresent()).findFirst().orElseThrow();
        }
        return m;
    }

    /** Writes an integral member of any width (u8/u16/u32/int/u64), truncating as C would. */
    public static void put(MemorySegment s, MemoryLayout l, String path, long value) {
        long off = at(l, path);
        switch ((int) member(l, path).byteSize()) {
            case 1 -> s.set(ValueLayout.JAVA_BYTE, off, (byte) value);
            case 2 -> s.set(ValueLayout.JAVA_SHORT, off, (short) value);
            case 4 -> s.set(ValueLayout.JAVA_INT, off, (int) value);
            case 8 -> s.set(ValueLayout.JAVA_LONG, off, value);
            default -> throw new IllegalArgumentException(path);
        }
    }

    /** Reads an integral member, unsigned for u8/u16/u32. */
    public static long get(MemorySegment s, MemoryLayout l, String path) {
        long off = at(l, path);
        return switch ((int) member(l, path).byteSize()) {
            case 1 -> Byte.toUnsignedLong(s.get(ValueLayout.JAVA_BYTE, off));
            case 2 -> Short.toUnsignedLong(s.get(ValueLayout.JAVA_SHORT, off));
            case 4 -> Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, off));
            case 8 -> s.get(ValueLayout.JAVA_LONG, off);
            default -> throw new IllegalArgumentException(path);
        };
    }

    public static void putPointer(MemorySegment s, MemoryLayout l, String path, MemorySegment p) {
        s.set(ValueLayout.ADDRESS, at(l, path), p);
    }

    public static void putBytes(MemorySegment s, MemoryLayout l, String path, byte[] bytes) {
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, at(l, path), bytes.length);
    }

    public static byte[] getBytes(MemorySegment s, MemoryLayout l, String path, int n) {
        byte[] b = new byte[n];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, at(l, path), b, 0, n);
        return b;
    }

    /** The layouts the API encodes by path. */
    public static MemoryLayout qpAttr() {
        return IBV_QP_ATTR;
    }

    public static MemoryLayout qpInitAttr() {
        return IBV_QP_INIT_ATTR;
    }

    public static MemoryLayout ahAttr() {
        return IBV_AH_ATTR;
    }

    public static MemoryLayout srqInitAttr() {
        return Structs.IBV_SRQ_INIT_ATTR;
    }

    public static MemoryLayout srqAttr() {
        return Structs.IBV_SRQ_ATTR;
    }

    public static MemoryLayout qp() {
        return Structs.IBV_QP;
    }

    public static MemoryLayout cq() {
        return Structs.IBV_CQ;
    }

    public static MemoryLayout compChannel() {
        return Structs.IBV_COMP_CHANNEL;
    }

    static Map<String, Long> cacheForTests() {
        return new HashMap<>(OFFSETS);
    }
}
