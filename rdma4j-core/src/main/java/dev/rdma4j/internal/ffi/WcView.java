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

    /** Where a field lies in a copied entry: its word (high 32 bits) and its shift in that word (low). */
    private static long at(long offset, int bytes) {
        long within = offset & 7;
        return (offset >>> 3) << 32 | (LITTLE_ENDIAN ? within * 8 : (Long.BYTES - bytes - within) * 8);
    }

    // constants, so that each reader below is small enough for C1 to inline: a word, a shift, a cast
    private static final int STATUS_W = (int) (at(STATUS, 4) >>> 32);
    private static final int STATUS_S = (int) at(STATUS, 4);
    private static final int OPCODE_W = (int) (at(OPCODE, 4) >>> 32);
    private static final int OPCODE_S = (int) at(OPCODE, 4);
    private static final int VENDOR_ERR_W = (int) (at(VENDOR_ERR, 4) >>> 32);
    private static final int VENDOR_ERR_S = (int) at(VENDOR_ERR, 4);
    private static final int BYTE_LEN_W = (int) (at(BYTE_LEN, 4) >>> 32);
    private static final int BYTE_LEN_S = (int) at(BYTE_LEN, 4);
    private static final int IMM_W = (int) (at(IMM, 4) >>> 32);
    private static final int IMM_S = (int) at(IMM, 4);
    private static final int QP_NUM_W = (int) (at(QP_NUM, 4) >>> 32);
    private static final int QP_NUM_S = (int) at(QP_NUM, 4);
    private static final int SRC_QP_W = (int) (at(SRC_QP, 4) >>> 32);
    private static final int SRC_QP_S = (int) at(SRC_QP, 4);
    private static final int WC_FLAGS_W = (int) (at(WC_FLAGS, 4) >>> 32);
    private static final int WC_FLAGS_S = (int) at(WC_FLAGS, 4);
    private static final int PKEY_INDEX_W = (int) (at(PKEY_INDEX, 2) >>> 32);
    private static final int PKEY_INDEX_S = (int) at(PKEY_INDEX, 2);
    private static final int SLID_W = (int) (at(SLID, 2) >>> 32);
    private static final int SLID_S = (int) at(SLID, 2);
    private static final int SL_W = (int) (at(SL, 1) >>> 32);
    private static final int SL_S = (int) at(SL, 1);
    private static final int WR_ID_W = (int) (WR_ID >>> 3);

    public static long wrId(long[] w) {
        return w[WR_ID_W];
    }

    public static int status(long[] w) {
        return (int) (w[STATUS_W] >>> STATUS_S);
    }

    public static int opcode(long[] w) {
        return (int) (w[OPCODE_W] >>> OPCODE_S);
    }

    public static int vendorErr(long[] w) {
        return (int) (w[VENDOR_ERR_W] >>> VENDOR_ERR_S);
    }

    public static int byteLen(long[] w) {
        return (int) (w[BYTE_LEN_W] >>> BYTE_LEN_S);
    }

    /** {@code imm_data} in host order. */
    public static int immData(long[] w) {
        return Integer.reverseBytes((int) (w[IMM_W] >>> IMM_S));
    }

    public static int qpNum(long[] w) {
        return (int) (w[QP_NUM_W] >>> QP_NUM_S);
    }

    public static int srcQp(long[] w) {
        return (int) (w[SRC_QP_W] >>> SRC_QP_S);
    }

    public static int wcFlags(long[] w) {
        return (int) (w[WC_FLAGS_W] >>> WC_FLAGS_S);
    }

    public static int pkeyIndex(long[] w) {
        return (int) (w[PKEY_INDEX_W] >>> PKEY_INDEX_S) & 0xffff;
    }

    public static int slid(long[] w) {
        return (int) (w[SLID_W] >>> SLID_S) & 0xffff;
    }

    public static int sl(long[] w) {
        return (int) (w[SL_W] >>> SL_S) & 0xff;
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

    /** Writes entry {@code i} whole (an extended CQ's entry read through its {@code read_*} functions). */
    public static void fill(MemorySegment wcs, int i, long wrId, int status, int opcode, int vendorErr, int byteLen,
            int immRaw, int qpNum, int srcQp, int wcFlags, int slid, int sl, int dlidPathBits) {
        long b = i * SIZE;
        wcs.asSlice(b, SIZE).fill((byte) 0);
        wcs.set(ValueLayout.JAVA_LONG, b + WR_ID, wrId);
        wcs.set(ValueLayout.JAVA_INT, b + STATUS, status);
        wcs.set(ValueLayout.JAVA_INT, b + OPCODE, opcode);
        wcs.set(ValueLayout.JAVA_INT, b + VENDOR_ERR, vendorErr);
        wcs.set(ValueLayout.JAVA_INT, b + BYTE_LEN, byteLen);
        wcs.set(ValueLayout.JAVA_INT, b + IMM, immRaw);
        wcs.set(ValueLayout.JAVA_INT, b + QP_NUM, qpNum);
        wcs.set(ValueLayout.JAVA_INT, b + SRC_QP, srcQp);
        wcs.set(ValueLayout.JAVA_INT, b + WC_FLAGS, wcFlags);
        wcs.set(ValueLayout.JAVA_SHORT, b + SLID, (short) slid);
        wcs.set(ValueLayout.JAVA_BYTE, b + SL, (byte) sl);
        wcs.set(ValueLayout.JAVA_BYTE, b + DLID_PATH_BITS, (byte) dlidPathBits);
    }

    /** Moves entry {@code from} over entry {@code to} (dropping a stale completion). */
    public static void move(MemorySegment wcs, int from, int to) {
        MemorySegment.copy(wcs, from * SIZE, wcs, to * SIZE, SIZE);
    }
}
