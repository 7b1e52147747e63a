package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.Structs.IBV_WC;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Reads and writes {@code struct ibv_wc} arrays at precomputed offsets: the poll hot path. */
public final class WcView {
    public static final long SIZE = IBV_WC.byteSize();
    private static final long WR_ID = CLayouts.offset(IBV_WC, "wr_id");
    private static final long STATUS = CLayouts.offset(IBV_WC, "status");
    private static final long OPCODE = CLayouts.offset(IBV_WC, "opcode");
    private static final long VENDOR_ERR = CLayouts.offset(IBV_WC, "vendor_err");
    private static final long BYTE_LEN = CLayouts.offset(IBV_WC, "byte_len");
    private static final long IMM = CLayouts.offset(IBV_WC, "$imm", "imm_data");
    private static final long QP_NUM = CLayouts.offset(IBV_WC, "qp_num");
    private static final long SRC_QP = CLayouts.offset(IBV_WC, "src_qp");
    private static final long WC_FLAGS = CLayouts.offset(IBV_WC, "wc_flags");
    private static final long PKEY_INDEX = CLayouts.offset(IBV_WC, "pkey_index");
    private static final long SLID = CLayouts.offset(IBV_WC, "slid");
    private static final long SL = CLayouts.offset(IBV_WC, "sl");
    private static final long DLID_PATH_BITS = CLayouts.offset(IBV_WC, "dlid_path_bits");

    /**
     * An entry in 64-bit words: {@link #copy} reads a whole one with one bulk copy and the {@code long[]} readers
     * below decode its fields from the words, for a snapshot of every field ({@code WorkCompletions.get}): one
     * call instead of a memory access per field, each of which C1 (the guest's compiler) does not inline.
     */
    public static final int WORDS = (int) (SIZE / Long.BYTES);
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    static {
        if (SIZE % Long.BYTES != 0) {
            throw new ExceptionInInitializerError("struct ibv_wc is " + SIZE + " bytes, not whole 64-bit words");
        }
    }

    private WcView() {
    }

    /** Copies entry {@code i} into {@code words} ({@link #WORDS} of them). */
    public static void copy(MemorySegment wcs, int i, long[] words) {
        MemorySegment.copy(wcs, ValueLayout.JAVA_LONG, i * SIZE, words, 0, WORDS);
    }

    /** The {@code bytes} bytes at {@code offset} of a copied entry, in the low bits. */
    private static long field(long[] words, long offset, int bytes) {
        long word = words[(int) (offset >>> 3)];
        long at = offset & 7;
        return word >>> (LITTLE_ENDIAN ? at * 8 : (Long.BYTES - bytes - at) * 8);
    }

    public static long wrId(long[] w) {
        return w[(int) (WR_ID >>> 3)];
    }

    public static int status(long[] w) {
        return (int) field(w, STATUS, 4);
    }

    public static int opcode(long[] w) {
        return (int) field(w, OPCODE, 4);
    }

    public static int vendorErr(long[] w) {
        return (int) field(w, VENDOR_ERR, 4);
    }

    public static int byteLen(long[] w) {
        return (int) field(w, BYTE_LEN, 4);
    }

    /** {@code imm_data} in host order. */
    public static int immData(long[] w) {
        return Integer.reverseBytes((int) field(w, IMM, 4));
    }

    public static int qpNum(long[] w) {
        return (int) field(w, QP_NUM, 4);
    }

    public static int srcQp(long[] w) {
        return (int) field(w, SRC_QP, 4);
    }

    public static int wcFlags(long[] w) {
        return (int) field(w, WC_FLAGS, 4);
    }

    public static int pkeyIndex(long[] w) {
        return (int) field(w, PKEY_INDEX, 2) & 0xffff;
    }

    public static int slid(long[] w) {
        return (int) field(w, SLID, 2) & 0xffff;
    }

    public static int sl(long[] w) {
        return (int) field(w, SL, 1) & 0xff;
    }

    public static long wrId(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_LONG, i * SIZE + WR_ID);
    }

    public static void wrId(MemorySegment wcs, int i, long v) {
        wcs.set(ValueLayout.JAVA_LONG, i * SIZE + WR_ID, v);
    }

    public static int status(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + STATUS);
    }

    public static int opcode(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + OPCODE);
    }

    /** Writes completion {@code i}'s opcode (tests and benchmarks that fabricate completions). */
    public static void opcode(MemorySegment wcs, int i, int v) {
        wcs.set(ValueLayout.JAVA_INT, i * SIZE + OPCODE, v);
    }

    public static int vendorErr(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + VENDOR_ERR);
    }

    public static int byteLen(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + BYTE_LEN);
    }

    /** {@code imm_data} is {@code __be32}: returned in host order. */
    public static int immData(MemorySegment wcs, int i) {
        return Integer.reverseBytes(wcs.get(ValueLayout.JAVA_INT, i * SIZE + IMM));
    }

    public static int qpNum(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + QP_NUM);
    }

    public static int srcQp(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + SRC_QP);
    }

    public static int wcFlags(MemorySegment wcs, int i) {
        return wcs.get(ValueLayout.JAVA_INT, i * SIZE + WC_FLAGS);
    }

    public static int pkeyIndex(MemorySegment wcs, int i) {
        return Short.toUnsignedInt(wcs.get(ValueLayout.JAVA_SHORT, i * SIZE + PKEY_INDEX));
    }

    public static int slid(MemorySegment wcs, int i) {
        return Short.toUnsignedInt(wcs.get(ValueLayout.JAVA_SHORT, i * SIZE + SLID));
    }

    public static int sl(MemorySegment wcs, int i) {
        return Byte.toUnsignedInt(wcs.get(ValueLayout.JAVA_BYTE, i * SIZE + SL));
    }

    public static int dlidPathBits(MemorySegment wcs, int i) {
        return Byte.toUnsignedInt(wcs.get(ValueLayout.JAVA_BYTE, i * SIZE + DLID_PATH_BITS));
    }

    /** Moves entry {@code from} over entry {@code to} (dropping a stale completion). */
    public static void move(MemorySegment wcs, int from, int to) {
        MemorySegment.copy(wcs, from * SIZE, wcs, to * SIZE, SIZE);
    }
}
