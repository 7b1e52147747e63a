package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.Structs.IBV_RECV_WR;
import static dev.rdma4j.internal.ffi.Structs.IBV_SEND_WR;
import static dev.rdma4j.internal.ffi.Structs.IBV_SGE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Encodes {@code ibv_send_wr}, {@code ibv_recv_wr} and {@code ibv_sge} arrays at precomputed offsets. */
public final class WrView {
    public static final long SEND_SIZE = IBV_SEND_WR.byteSize();
    public static final long RECV_SIZE = IBV_RECV_WR.byteSize();
    public static final long SGE_SIZE = IBV_SGE.byteSize();

    public static final int WR_RDMA_WRITE = 0;
    public static final int WR_RDMA_WRITE_WITH_IMM = 1;
    public static final int WR_SEND = 2;
    public static final int WR_SEND_WITH_IMM = 3;
    public static final int WR_RDMA_READ = 4;
    public static final int WR_ATOMIC_CMP_AND_SWP = 5;
    public static final int WR_ATOMIC_FETCH_AND_ADD = 6;
    public static final int WR_LOCAL_INV = 7;
    public static final int WR_BIND_MW = 8;
    public static final int WR_SEND_WITH_INV = 9;
    public static final int WR_ATOMIC_WRITE = 15;

    public static final int SEND_FENCE = 1;
    public static final int SEND_SIGNALED = 2;
    public static final int SEND_SOLICITED = 4;
    public static final int SEND_INLINE = 8;

    private static final long WR_ID = CLayouts.offset(IBV_SEND_WR, "wr_id");
    private static final long NEXT = CLayouts.offset(IBV_SEND_WR, "next");
    private static final long SG_LIST = CLayouts.offset(IBV_SEND_WR, "sg_list");
    private static final long NUM_SGE = CLayouts.offset(IBV_SEND_WR, "num_sge");
    private static final long OPCODE = CLayouts.offset(IBV_SEND_WR, "opcode");
    private static final long SEND_FLAGS = CLayouts.offset(IBV_SEND_WR, "send_flags");
    private static final long IMM = CLayouts.offset(IBV_SEND_WR, "$imm", "imm_data");
    private static final long WR = CLayouts.offset(IBV_SEND_WR, "wr");
    private static final long RDMA_ADDR = CLayouts.offset(IBV_SEND_WR, "wr", "rdma", "remote_addr");
    private static final long RDMA_RKEY = CLayouts.offset(IBV_SEND_WR, "wr", "rdma", "rkey");
    private static final long ATOMIC_ADDR = CLayouts.offset(IBV_SEND_WR, "wr", "atomic", "remote_addr");
    private static final long ATOMIC_COMPARE_ADD = CLayouts.offset(IBV_SEND_WR, "wr", "atomic", "compare_add");
    private static final long ATOMIC_SWAP = CLayouts.offset(IBV_SEND_WR, "wr", "atomic", "swap");
    private static final long ATOMIC_RKEY = CLayouts.offset(IBV_SEND_WR, "wr", "atomic", "rkey");
    private static final long UD_AH = CLayouts.offset(IBV_SEND_WR, "wr", "ud", "ah");
    private static final long UD_QPN = CLayouts.offset(IBV_SEND_WR, "wr", "ud", "remote_qpn");
    private static final long UD_QKEY = CLayouts.offset(IBV_SEND_WR, "wr", "ud", "remote_qkey");
    private static final long INVALIDATE_RKEY = CLayouts.offset(IBV_SEND_WR, "$imm", "invalidate_rkey");
    private static final long BIND_MW = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "mw");
    private static final long BIND_RKEY = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "rkey");
    private static final long BIND_MR = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "bind_info", "mr");
    private static final long BIND_ADDR = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "bind_info", "addr");
    private static final long BIND_LENGTH = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "bind_info", "length");
    private static final long BIND_ACCESS = CLayouts.offset(IBV_SEND_WR, "$bind", "bind_mw", "bind_info",
            "mw_access_flags");
    private static final long WR_UNION_SIZE = IBV_SEND_WR.select(
            java.lang.foreign.MemoryLayout.PathElement.groupElement("wr")).byteSize();

    private static final long R_WR_ID = CLayouts.offset(IBV_RECV_WR, "wr_id");
    private static final long R_NEXT = CLayouts.offset(IBV_RECV_WR, "next");
    private static final long R_SG_LIST = CLayouts.offset(IBV_RECV_WR, "sg_list");
    private static final long R_NUM_SGE = CLayouts.offset(IBV_RECV_WR, "num_sge");

    private static final long SGE_ADDR = CLayouts.offset(IBV_SGE, "addr");
    private static final long SGE_LENGTH = CLayouts.offset(IBV_SGE, "length");
    private static final long SGE_LKEY = CLayouts.offset(IBV_SGE, "lkey");

    private WrView() {
    }

    /** Starts send request {@code i}: every member written, the {@code wr} union zeroed. */
    public static void send(MemorySegment wrs, int i, long sgList, int opcode, int flags, int immHost) {
        long b = i * SEND_SIZE;
        wrs.set(ValueLayout.JAVA_LONG, b + WR_ID, 0L);
        wrs.set(ValueLayout.JAVA_LONG, b + NEXT, 0L); // pointers written as addresses: no segment objects
        wrs.set(ValueLayout.JAVA_LONG, b + SG_LIST, sgList);
        wrs.set(ValueLayout.JAVA_INT, b + NUM_SGE, 0);
        wrs.set(ValueLayout.JAVA_INT, b + OPCODE, opcode);
        wrs.set(ValueLayout.JAVA_INT, b + SEND_FLAGS, flags);
        wrs.set(ValueLayout.JAVA_INT, b + IMM, Integer.reverseBytes(immHost)); // __be32
        for (long o = 0; o < WR_UNION_SIZE; o += 8) {
            wrs.set(ValueLayout.JAVA_LONG, b + WR + o, 0L);
        }
    }

    public static void sendWrId(MemorySegment wrs, int i, long wrId) {
        wrs.set(ValueLayout.JAVA_LONG, i * SEND_SIZE + WR_ID, wrId);
    }

    public static long sendWrIdOf(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + WR_ID);
    }

    public static void sendNext(MemorySegment wrs, int i, long next) {
        wrs.set(ValueLayout.JAVA_LONG, i * SEND_SIZE + NEXT, next);
    }

    public static void sendNumSge(MemorySegment wrs, int i, int n) {
        wrs.set(ValueLayout.JAVA_INT, i * SEND_SIZE + NUM_SGE, n);
    }

    public static int sendFlags(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + SEND_FLAGS);
    }

    public static void sendFlags(MemorySegment wrs, int i, int flags) {
        wrs.set(ValueLayout.JAVA_INT, i * SEND_SIZE + SEND_FLAGS, flags);
    }

    public static int sendOpcode(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + OPCODE);
    }

    public static void rdma(MemorySegment wrs, int i, long remoteAddr, int rkey) {
        wrs.set(ValueLayout.JAVA_LONG, i * SEND_SIZE + RDMA_ADDR, remoteAddr);
        wrs.set(ValueLayout.JAVA_INT, i * SEND_SIZE + RDMA_RKEY, rkey);
    }

    public static void atomic(MemorySegment wrs, int i, long remoteAddr, int rkey, long compareAdd, long swap) {
        long b = i * SEND_SIZE;
        wrs.set(ValueLayout.JAVA_LONG, b + ATOMIC_ADDR, remoteAddr);
        wrs.set(ValueLayout.JAVA_LONG, b + ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(ValueLayout.JAVA_LONG, b + ATOMIC_SWAP, swap);
        wrs.set(ValueLayout.JAVA_INT, b + ATOMIC_RKEY, rkey);
    }

    /** The {@code invalidate_rkey} of request {@code i} (host order: unlike {@code imm_data}, not big-endian). */
    public static void invalidateRkey(MemorySegment wrs, int i, int rkey) {
        wrs.set(ValueLayout.JAVA_INT, i * SEND_SIZE + INVALIDATE_RKEY, rkey);
    }

    /** The {@code bind_mw} member of request {@code i}: the window, its new rkey, and the range of the region. */
    public static void bindMw(MemorySegment wrs, int i, long mw, int rkey, long mr, long addr, long length,
            int access) {
        long b = i * SEND_SIZE;
        wrs.set(ValueLayout.JAVA_LONG, b + BIND_MW, mw);
        wrs.set(ValueLayout.JAVA_INT, b + BIND_RKEY, rkey);
        wrs.set(ValueLayout.JAVA_LONG, b + BIND_MR, mr);
        wrs.set(ValueLayout.JAVA_LONG, b + BIND_ADDR, addr);
        wrs.set(ValueLayout.JAVA_LONG, b + BIND_LENGTH, length);
        wrs.set(ValueLayout.JAVA_INT, b + BIND_ACCESS, access);
    }

    /** The new rkey the bind request {@code i} gives its window. */
    public static int bindRkey(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + BIND_RKEY);
    }

    // the request's members read back, for replaying a batch through the ibv_wr_* functions (QueuePairEx)

    public static int sendNumSge(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + NUM_SGE);
    }

    /** {@code imm_data} (or {@code invalidate_rkey}) as stored: {@code __be32} for the immediate. */
    public static int immRaw(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + IMM);
    }

    public static long rdmaAddr(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + RDMA_ADDR);
    }

    public static int rdmaRkey(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + RDMA_RKEY);
    }

    public static long atomicAddr(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + ATOMIC_ADDR);
    }

    public static long atomicCompareAdd(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + ATOMIC_COMPARE_ADD);
    }

    public static long atomicSwap(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + ATOMIC_SWAP);
    }

    public static int atomicRkey(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + ATOMIC_RKEY);
    }

    public static long udAh(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + UD_AH);
    }

    public static int udQpn(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + UD_QPN);
    }

    public static int udQkey(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SEND_SIZE + UD_QKEY);
    }

    public static long bindMwOf(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * SEND_SIZE + BIND_MW);
    }

    /** The address of request {@code i}'s {@code struct ibv_mw_bind_info} ({@code ibv_wr_bind_mw}'s argument). */
    public static long bindInfoAddress(MemorySegment wrs, int i) {
        return wrs.address() + i * SEND_SIZE + BIND_MR;
    }

    public static void ud(MemorySegment wrs, int i, long ah, int remoteQpn, int remoteQkey) {
        long b = i * SEND_SIZE;
        wrs.set(ValueLayout.JAVA_LONG, b + UD_AH, ah);
        wrs.set(ValueLayout.JAVA_INT, b + UD_QPN, remoteQpn);
        wrs.set(ValueLayout.JAVA_INT, b + UD_QKEY, remoteQkey);
    }

    public static void recv(MemorySegment wrs, int i, long sgList) {
        long b = i * RECV_SIZE;
        wrs.set(ValueLayout.JAVA_LONG, b + R_WR_ID, 0L);
        wrs.set(ValueLayout.JAVA_LONG, b + R_NEXT, 0L);
        wrs.set(ValueLayout.JAVA_LONG, b + R_SG_LIST, sgList);
        wrs.set(ValueLayout.JAVA_INT, b + R_NUM_SGE, 0);
    }

    public static void recvWrId(MemorySegment wrs, int i, long wrId) {
        wrs.set(ValueLayout.JAVA_LONG, i * RECV_SIZE + R_WR_ID, wrId);
    }

    public static long recvWrIdOf(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_LONG, i * RECV_SIZE + R_WR_ID);
    }

    public static void recvNext(MemorySegment wrs, int i, long next) {
        wrs.set(ValueLayout.JAVA_LONG, i * RECV_SIZE + R_NEXT, next);
    }

    public static void recvNumSge(MemorySegment wrs, int i, int n) {
        wrs.set(ValueLayout.JAVA_INT, i * RECV_SIZE + R_NUM_SGE, n);
    }

    public static long sgeAddr(MemorySegment sges, int i) {
        return sges.get(ValueLayout.JAVA_LONG, i * SGE_SIZE + SGE_ADDR);
    }

    public static int sgeLkey(MemorySegment sges, int i) {
        return sges.get(ValueLayout.JAVA_INT, i * SGE_SIZE + SGE_LKEY);
    }

    public static int sgeLength(MemorySegment sges, int i) {
        return sges.get(ValueLayout.JAVA_INT, i * SGE_SIZE + SGE_LENGTH);
    }

    public static void sge(MemorySegment sges, int i, long addr, int length, int lkey) {
        long b = i * SGE_SIZE;
        sges.set(ValueLayout.JAVA_LONG, b + SGE_ADDR, addr);
        sges.set(ValueLayout.JAVA_INT, b + SGE_LENGTH, length);
        sges.set(ValueLayout.JAVA_INT, b + SGE_LKEY, lkey);
    }
}
