package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The extended queue pair ({@code struct ibv_qp_ex}): its creation ({@code ibv_create_qp_ex} with
 * {@code send_ops_flags}, through {@code verbs_context->create_qp_ex} as verbs.h's inline does; then the exported
 * {@code ibv_qp_to_qp_ex}) and the {@code ibv_wr_*} posting functions, which verbs.h defines {@code static inline} as
 * calls of the QP's own function pointers. The posting calls are linked {@code critical} like {@link DataPath}'s
 * (short, never blocking: the provider writes its send queue, and {@code wr_complete} rings the doorbell); the QP's
 * address goes as a {@code long}, kept alive by the caller (it holds the lock the QP's destroy takes first).
 *
 * <p>Threading: stateless; a QP's calls between {@code wr_start} and {@code wr_complete} must come from one thread
 * under its send lock.
 */
@SuppressWarnings("restricted")
public final class QpExVerbs {
    private QpExVerbs() {
    }

    /** {@code enum ibv_qp_init_attr_mask}: the members of {@code ibv_qp_init_attr_ex} that are set. */
    public static final int IBV_QP_INIT_ATTR_PD = 1;
    public static final int IBV_QP_INIT_ATTR_SEND_OPS_FLAGS = 1 << 6;

    /** {@code enum ibv_qp_create_send_ops_flags}: the {@code ibv_wr_*} operations a QP is created for. */
    public static final long IBV_QP_EX_WITH_RDMA_WRITE = 1;
    public static final long IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM = 1 << 1;
    public static final long IBV_QP_EX_WITH_SEND = 1 << 2;
    public static final long IBV_QP_EX_WITH_SEND_WITH_IMM = 1 << 3;
    public static final long IBV_QP_EX_WITH_RDMA_READ = 1 << 4;
    public static final long IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP = 1 << 5;
    public static final long IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD = 1 << 6;
    public static final long IBV_QP_EX_WITH_LOCAL_INV = 1 << 7;
    public static final long IBV_QP_EX_WITH_BIND_MW = 1 << 8;
    public static final long IBV_QP_EX_WITH_SEND_WITH_INV = 1 << 9;
    public static final long IBV_QP_EX_WITH_ATOMIC_WRITE = 1 << 12;

    private static final long INIT_COMP_MASK = CLayouts.offset(Structs.IBV_QP_INIT_ATTR_EX, "comp_mask");
    private static final long INIT_PD = CLayouts.offset(Structs.IBV_QP_INIT_ATTR_EX, "pd");
    private static final long INIT_SEND_OPS = CLayouts.offset(Structs.IBV_QP_INIT_ATTR_EX, "send_ops_flags");
    private static final long WR_ID = CLayouts.offset(Structs.IBV_QP_EX, "wr_id");
    private static final long WR_FLAGS = CLayouts.offset(Structs.IBV_QP_EX, "wr_flags");

    private static final class H {
        static final Linker.Option CRITICAL = Linker.Option.critical(false);
        static final MethodHandle CREATE = Native.pointerCallWithErrno(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle TO_QP_EX = Native.downcall(Libibverbs.lookup(), "ibv_qp_to_qp_ex",
                FunctionDescriptor.of(ADDRESS, ADDRESS), false);
        static final MethodHandle Q = h(FunctionDescriptor.ofVoid(JAVA_LONG));
        static final MethodHandle Q_INT = h(FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        static final MethodHandle Q_I = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT));
        static final MethodHandle Q_I_L = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG));
        static final MethodHandle Q_I_L_I = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
        static final MethodHandle Q_I_L_L = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
        static final MethodHandle Q_I_L_L_L = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG,
                JAVA_LONG));
        static final MethodHandle Q_L_I_L = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG));
        static final MethodHandle Q_L_I_I = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
        static final MethodHandle Q_L_L = h(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_LONG));

        private static MethodHandle h(FunctionDescriptor fd) {
            return Native.LINKER.downcallHandle(fd, CRITICAL);
        }
    }

    /** The {@code ibv_wr_*} members of {@code struct ibv_qp_ex}, by their C names. */
    public enum Fn {
        ATOMIC_CMP_SWP("wr_atomic_cmp_swp"), ATOMIC_FETCH_ADD("wr_atomic_fetch_add"), BIND_MW("wr_bind_mw"),
        LOCAL_INV("wr_local_inv"), RDMA_READ("wr_rdma_read"), RDMA_WRITE("wr_rdma_write"),
        RDMA_WRITE_IMM("wr_rdma_write_imm"), SEND("wr_send"), SEND_IMM("wr_send_imm"), SEND_INV("wr_send_inv"),
        SET_UD_ADDR("wr_set_ud_addr"), SET_INLINE_DATA("wr_set_inline_data"),
        SET_INLINE_DATA_LIST("wr_set_inline_data_list"), SET_SGE("wr_set_sge"), SET_SGE_LIST("wr_set_sge_list"),
        START("wr_start"), COMPLETE("wr_complete"), ABORT("wr_abort"), ATOMIC_WRITE("wr_atomic_write");

        final String member;

        Fn(String member) {
            this.member = member;
        }
    }

    /**
     * verbs.h's {@code ibv_create_qp_ex} with {@code IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS}:
     * {@code init} is a filled {@code struct ibv_qp_init_attr} (the first members of {@code ibv_qp_init_attr_ex}),
     * into which the granted capacities are written back.
     *
     * @return the {@code struct ibv_qp *}
     * @throws NativeException {@code EOPNOTSUPP} when the provider has no {@code create_qp_ex}, else the verb's errno
     */
    public static MemorySegment createQpEx(MemorySegment pd, MemorySegment init) throws NativeException {
        MemorySegment ctx = pd.get(ADDRESS, CLayouts.offset(Structs.IBV_PD, "context"))
                .reinterpret(Structs.IBV_CONTEXT.byteSize());
        long sendOps = sendOpsFor(init.get(JAVA_INT, CLayouts.offset(Structs.IBV_QP_INIT_ATTR, "qp_type")));
        MemorySegment op = DeviceVerbs.verbsContextOp(ctx, Structs.VERBS_CONTEXT_CREATE_QP_EX_OFFSET);
        if (op == null) {
            throw Native.fail("ibv_create_qp_ex", Errno.EOPNOTSUPP, "the provider has no extended queue pairs");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ex = arena.allocate(Structs.IBV_QP_INIT_ATTR_EX);
            long prefix = Structs.IBV_QP_INIT_ATTR.byteSize();
            ex.asSlice(0, prefix).copyFrom(init.asSlice(0, prefix));
            ex.set(JAVA_INT, INIT_COMP_MASK, IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
            ex.set(ADDRESS, INIT_PD, pd);
            ex.set(JAVA_LONG, INIT_SEND_OPS, sendOps);
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment qp = (MemorySegment) H.CREATE.invokeExact(op, errno, ctx, ex);
            if (qp.equals(MemorySegment.NULL)) {
                throw Native.fail("ibv_create_qp_ex", Native.errorCode(-1, Native.errno(errno)),
                        "send_ops_flags 0x" + Long.toHexString(sendOps));
            }
            init.asSlice(0, prefix).copyFrom(ex.asSlice(0, prefix)); // the granted capacities
            return qp.reinterpret(Structs.IBV_QP.byteSize());
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The {@code ibv_wr_*} operations rdma4j encodes for a QP type ({@code enum ibv_qp_type}). */
    static long sendOpsFor(int qpType) {
        long sends = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
        return switch (qpType) {
            case CEnums.IBV_QPT_UD -> sends;
            case CEnums.IBV_QPT_UC -> sends | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
                    | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV;
            default -> sends | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
                    | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
                    | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW
                    | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE;
        };
    }

    /**
     * {@code ibv_qp_to_qp_ex}.
     *
     * @return the {@code struct ibv_qp_ex}, or null for a QP created without {@code send_ops_flags}
     */
    public static MemorySegment qpToQpEx(MemorySegment qp) {
        try {
            MemorySegment qpx = (MemorySegment) H.TO_QP_EX.invokeExact(qp);
            return qpx.equals(MemorySegment.NULL) ? null : qpx.reinterpret(Structs.IBV_QP_EX.byteSize());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The QP's function pointer {@code qpx->wr_*}, or NULL when the provider set none (an op not asked for). */
    public static MemorySegment fn(MemorySegment qpx, Fn f) {
        return qpx.get(ADDRESS, CLayouts.offset(Structs.IBV_QP_EX, f.member));
    }

    /** {@code qpx->wr_id} and {@code qpx->wr_flags}: what the next {@code ibv_wr_*} opcode call posts with. */
    public static void idAndFlags(MemorySegment qpx, long wrId, int flags) {
        qpx.set(JAVA_LONG, WR_ID, wrId);
        qpx.set(JAVA_INT, WR_FLAGS, flags);
    }

    /** {@code ibv_wr_start}, {@code ibv_wr_abort}, {@code ibv_wr_send}. */
    public static void call(MemorySegment fn, long qpx) {
        try {
            H.Q.invokeExact(fn, qpx);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_complete}: 0 or an errno (then nothing since {@code ibv_wr_start} was posted). */
    public static int complete(MemorySegment fn, long qpx) {
        try {
            return (int) H.Q_INT.invokeExact(fn, qpx);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_send_imm} ({@code imm} as {@code __be32}), {@code ibv_wr_send_inv}, {@code ibv_wr_local_inv}. */
    public static void callInt(MemorySegment fn, long qpx, int value) {
        try {
            H.Q_I.invokeExact(fn, qpx, value);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_rdma_read}, {@code ibv_wr_rdma_write}. */
    public static void rdma(MemorySegment fn, long qpx, int rkey, long remoteAddr) {
        try {
            H.Q_I_L.invokeExact(fn, qpx, rkey, remoteAddr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_rdma_write_imm} ({@code imm} as {@code __be32}). */
    public static void rdmaImm(MemorySegment fn, long qpx, int rkey, long remoteAddr, int imm) {
        try {
            H.Q_I_L_I.invokeExact(fn, qpx, rkey, remoteAddr, imm);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_atomic_fetch_add}; {@code ibv_wr_atomic_write} ({@code arg}: the address of the 8 bytes). */
    public static void rdmaLong(MemorySegment fn, long qpx, int rkey, long remoteAddr, long arg) {
        try {
            H.Q_I_L_L.invokeExact(fn, qpx, rkey, remoteAddr, arg);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_atomic_cmp_swp}. */
    public static void compareSwap(MemorySegment fn, long qpx, int rkey, long remoteAddr, long compare, long swap) {
        try {
            H.Q_I_L_L_L.invokeExact(fn, qpx, rkey, remoteAddr, compare, swap);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_bind_mw}: the window, its new rkey, the address of a {@code struct ibv_mw_bind_info}. */
    public static void bindMw(MemorySegment fn, long qpx, long mw, int rkey, long bindInfo) {
        try {
            H.Q_L_I_L.invokeExact(fn, qpx, mw, rkey, bindInfo);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_set_ud_addr}. */
    public static void udAddr(MemorySegment fn, long qpx, long ah, int remoteQpn, int remoteQkey) {
        try {
            H.Q_L_I_I.invokeExact(fn, qpx, ah, remoteQpn, remoteQkey);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_set_inline_data} (address, length), {@code ibv_wr_set_sge_list} and
     * {@code ibv_wr_set_inline_data_list} (count, address of the list). */
    public static void twoLongs(MemorySegment fn, long qpx, long a, long b) {
        try {
            H.Q_L_L.invokeExact(fn, qpx, a, b);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_wr_set_sge}. */
    public static void sge(MemorySegment fn, long qpx, int lkey, long addr, int length) {
        try {
            H.Q_I_L_I.invokeExact(fn, qpx, lkey, addr, length);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
