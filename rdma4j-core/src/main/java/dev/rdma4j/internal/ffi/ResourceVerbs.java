package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * Create/destroy/modify verbs of the verbs objects below a context (PD, MR, completion channel, CQ,
 * QP, AH, SRQ). Pointers come back as segments spanning their C struct; failures as
 * {@link NativeException} with the verb's errno.
 */
@SuppressWarnings("restricted")
public final class ResourceVerbs {
    /** IBV_ACCESS_OPTIONAL_RANGE: access bits that make verbs.h's ibv_reg_mr take the iova2 path. */
    public static final int ACCESS_OPTIONAL_RANGE = ((1 << 30) - 1) & ~((1 << 20) - 1);

    private ResourceVerbs() {
    }

    private static final class H {
        static final SymbolLookup L = Libibverbs.lookup();
        static final MethodHandle ALLOC_PD = d("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        static final MethodHandle DEALLOC_PD = d("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle REG_MR = d("ibv_reg_mr",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
        static final MethodHandle REG_MR_IOVA2 = d("ibv_reg_mr_iova2",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT));
        static final MethodHandle DEREG_MR = d("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle CREATE_COMP_CHANNEL = d("ibv_create_comp_channel",
                FunctionDescriptor.of(ADDRESS, ADDRESS));
        static final MethodHandle DESTROY_COMP_CHANNEL = d("ibv_destroy_comp_channel",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle CREATE_CQ = d("ibv_create_cq",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle DESTROY_CQ = d("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle CREATE_QP = d("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle MODIFY_QP = d("ibv_modify_qp",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle QUERY_QP = d("ibv_query_qp",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        static final MethodHandle DESTROY_QP = d("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle CREATE_AH = d("ibv_create_ah", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle DESTROY_AH = d("ibv_destroy_ah", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle INIT_AH_FROM_WC = d("ibv_init_ah_from_wc",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle CREATE_SRQ = d("ibv_create_srq",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle MODIFY_SRQ = d("ibv_modify_srq",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle QUERY_SRQ = d("ibv_query_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle DESTROY_SRQ = d("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));

        static final MethodHandle WC_STATUS_STR = Native.downcall(L, "ibv_wc_status_str",
                FunctionDescriptor.of(ADDRESS, JAVA_INT), false);

        private static MethodHandle d(String name, FunctionDescriptor fd) {
            return Native.downcall(L, name, fd, true);
        }
    }

    /** A pointer-returning verb: NULL becomes a NativeException with the captured errno. */
    @FunctionalInterface
    private interface PointerCall {
        MemorySegment call(MemorySegment errno) throws Throwable;
    }

    private static MemorySegment pointer(String verb, String detail, long size, PointerCall call)
            throws NativeException {
        Libibverbs.ensureLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment p = call.call(errno);
            if (p.equals(MemorySegment.NULL)) {
                throw Native.fail(verb, Native.errorCode(-1, Native.errno(errno)), detail);
            }
            return p.reinterpret(size);
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static void status(String verb, String detail, Native.StatusCall call) throws NativeException {
        Libibverbs.ensureLoaded();
        Native.check(verb, detail, call);
    }

    public static MemorySegment allocPd(MemorySegment ctx) throws NativeException {
        return pointer("ibv_alloc_pd", null, Structs.IBV_PD.byteSize(),
                e -> (MemorySegment) H.ALLOC_PD.invokeExact(e, ctx));
    }

    public static void deallocPd(MemorySegment pd) throws NativeException {
        status("ibv_dealloc_pd", null, e -> (int) H.DEALLOC_PD.invokeExact(e, pd));
    }

    /**
     * verbs.h's {@code ibv_reg_mr} macro over {@code __ibv_reg_mr}: access flags without optional-range
     * bits go to the exported {@code ibv_reg_mr}, others to {@code ibv_reg_mr_iova2} with iova = addr.
     */
    public static MemorySegment regMr(MemorySegment pd, MemorySegment buffer, int access) throws NativeException {
        long length = buffer.byteSize();
        String detail = length + " bytes at 0x" + Long.toHexString(buffer.address());
        if ((access & ACCESS_OPTIONAL_RANGE) == 0) {
            return pointer("ibv_reg_mr", detail, Structs.IBV_MR.byteSize(),
                    e -> (MemorySegment) H.REG_MR.invokeExact(e, pd, buffer, length, access));
        }
        return pointer("ibv_reg_mr_iova2", detail, Structs.IBV_MR.byteSize(),
                e -> (MemorySegment) H.REG_MR_IOVA2.invokeExact(e, pd, buffer, length, buffer.address(), access));
    }

    public static void deregMr(MemorySegment mr) throws NativeException {
        status("ibv_dereg_mr", null, e -> (int) H.DEREG_MR.invokeExact(e, mr));
    }

    public static MemorySegment createCompChannel(MemorySegment ctx) throws NativeException {
        return pointer("ibv_create_comp_channel", null, Structs.IBV_COMP_CHANNEL.byteSize(),
                e -> (MemorySegment) H.CREATE_COMP_CHANNEL.invokeExact(e, ctx));
    }

    public static void destroyCompChannel(MemorySegment channel) throws NativeException {
        status("ibv_destroy_comp_channel", null, e -> (int) H.DESTROY_COMP_CHANNEL.invokeExact(e, channel));
    }

    public static MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment channel, int vector)
            throws NativeException {
        return pointer("ibv_create_cq", cqe + " entries", Structs.IBV_CQ.byteSize(),
                e -> (MemorySegment) H.CREATE_CQ.invokeExact(e, ctx, cqe, MemorySegment.NULL, channel, vector));
    }

    public static void destroyCq(MemorySegment cq) throws NativeException {
        status("ibv_destroy_cq", null, e -> (int) H.DESTROY_CQ.invokeExact(e, cq));
    }

    public static MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) throws NativeException {
        return pointer("ibv_create_qp", null, Structs.IBV_QP.byteSize(),
                e -> (MemorySegment) H.CREATE_QP.invokeExact(e, pd, initAttr));
    }

    public static void modifyQp(MemorySegment qp, MemorySegment attr, int mask, String detail)
            throws NativeException {
        status("ibv_modify_qp", detail, e -> (int) H.MODIFY_QP.invokeExact(e, qp, attr, mask));
    }

    public static void queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr)
            throws NativeException {
        status("ibv_query_qp", null, e -> (int) H.QUERY_QP.invokeExact(e, qp, attr, mask, initAttr));
    }

    public static void destroyQp(MemorySegment qp) throws NativeException {
        status("ibv_destroy_qp", null, e -> (int) H.DESTROY_QP.invokeExact(e, qp));
    }

    public static MemorySegment createAh(MemorySegment pd, MemorySegment ahAttr) throws NativeException {
        return pointer("ibv_create_ah", null, Structs.IBV_AH.byteSize(),
                e -> (MemorySegment) H.CREATE_AH.invokeExact(e, pd, ahAttr));
    }

    /**
     * {@code ibv_init_ah_from_wc}: the address vector that answers a UD receive, from its completion and the
     * 40 bytes of GRH the receive buffer starts with (on RoCE v2 over IPv4, the IP header at byte 20).
     */
    public static void initAhFromWc(MemorySegment ctx, int port, MemorySegment wc, MemorySegment grh,
            MemorySegment ahAttr) throws NativeException {
        status("ibv_init_ah_from_wc", "port " + port,
                e -> (int) H.INIT_AH_FROM_WC.invokeExact(e, ctx, (byte) port, wc, grh, ahAttr));
    }

    public static void destroyAh(MemorySegment ah) throws NativeException {
        status("ibv_destroy_ah", null, e -> (int) H.DESTROY_AH.invokeExact(e, ah));
    }

    public static MemorySegment createSrq(MemorySegment pd, MemorySegment initAttr) throws NativeException {
        return pointer("ibv_create_srq", null, Structs.IBV_SRQ.byteSize(), e -> (MemorySegment) H.CREATE_SRQ.invokeExact(e, pd, initAttr));
    }

    public static void modifySrq(MemorySegment srq, MemorySegment attr, int mask) throws NativeException {
        status("ibv_modify_srq", null, e -> (int) H.MODIFY_SRQ.invokeExact(e, srq, attr, mask));
    }

    public static void querySrq(MemorySegment srq, MemorySegment attr) throws NativeException {
        status("ibv_query_srq", null, e -> (int) H.QUERY_SRQ.invokeExact(e, srq, attr));
    }

    public static void destroySrq(MemorySegment srq) throws NativeException {
        status("ibv_destroy_srq", null, e -> (int) H.DESTROY_SRQ.invokeExact(e, srq));
    }

    // ---------------------------------------------------------------- memory windows

    /** The provider's window verbs: verbs.h's {@code ibv_alloc_mw}, {@code ibv_dealloc_mw}, {@code ibv_bind_mw} are inline. */
    private static final class Mw {
        static final MethodHandle ALLOC = Native.pointerCallWithErrno(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle DEALLOC = Native.pointerCallWithErrno(FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle BIND = Native.pointerCallWithErrno(
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        static final long OPS = CLayouts.offset(Structs.IBV_CONTEXT, "ops");
        static final long OP_ALLOC = OPS + CLayouts.offset(Structs.IBV_CONTEXT_OPS, "alloc_mw");
        static final long OP_DEALLOC = OPS + CLayouts.offset(Structs.IBV_CONTEXT_OPS, "dealloc_mw");
        static final long OP_BIND = OPS + CLayouts.offset(Structs.IBV_CONTEXT_OPS, "bind_mw");
        static final long PD_CONTEXT = CLayouts.offset(Structs.IBV_PD, "context");
        static final long MW_CONTEXT = CLayouts.offset(Structs.IBV_MW, "context");
        static final long MW_RKEY = CLayouts.offset(Structs.IBV_MW, "rkey");
        static final long MWB_WR_ID = CLayouts.offset(Structs.IBV_MW_BIND, "wr_id");
        static final long MWB_FLAGS = CLayouts.offset(Structs.IBV_MW_BIND, "send_flags");
        static final long MWB_MR = CLayouts.offset(Structs.IBV_MW_BIND, "bind_info", "mr");
        static final long MWB_ADDR = CLayouts.offset(Structs.IBV_MW_BIND, "bind_info", "addr");
        static final long MWB_LENGTH = CLayouts.offset(Structs.IBV_MW_BIND, "bind_info", "length");
        static final long MWB_ACCESS = CLayouts.offset(Structs.IBV_MW_BIND, "bind_info", "mw_access_flags");
    }

    /** {@code context->ops.<member>} of the context at {@code ctx} (an address), or NULL when the provider has none. */
    private static MemorySegment op(long ctx, long offset) {
        return MemorySegment.ofAddress(ctx).reinterpret(Structs.IBV_CONTEXT.byteSize()).get(ADDRESS, offset);
    }

    /**
     * verbs.h's {@code ibv_alloc_mw}: {@code EOPNOTSUPP} when the provider has no {@code alloc_mw}.
     *
     * @param pd   the protection domain
     * @param type {@code IBV_MW_TYPE_1} or {@code IBV_MW_TYPE_2}
     * @return the {@code struct ibv_mw}
     * @throws NativeException with the errno
     */
    public static MemorySegment allocMw(MemorySegment pd, int type) throws NativeException {
        MemorySegment fn = op(pd.get(ADDRESS, Mw.PD_CONTEXT).address(), Mw.OP_ALLOC);
        if (fn.equals(MemorySegment.NULL)) {
            throw Native.fail("ibv_alloc_mw", Errno.EOPNOTSUPP, "the provider has no memory windows");
        }
        return pointer("ibv_alloc_mw", "type " + type, Structs.IBV_MW.byteSize(),
                e -> (MemorySegment) Mw.ALLOC.invokeExact(fn, e, pd, type));
    }

    /**
     * verbs.h's {@code ibv_dealloc_mw}.
     *
     * @param mw the window
     * @throws NativeException with the errno
     */
    public static void deallocMw(MemorySegment mw) throws NativeException {
        MemorySegment fn = op(mw.get(ADDRESS, Mw.MW_CONTEXT).address(), Mw.OP_DEALLOC);
        status("ibv_dealloc_mw", null, e -> (int) Mw.DEALLOC.invokeExact(fn, e, mw));
    }

    /**
     * verbs.h's {@code ibv_bind_mw} (type 1 windows): posts the bind on {@code qp}'s send queue with {@code wrId}
     * and, once posted, the provider gives the window its new rkey.
     *
     * @return 0 or the errno (nothing was posted then)
     */
    public static int bindMw(long qp, MemorySegment mw, long wrId, int sendFlags, long mr, long addr, long length,
            int access) {
        MemorySegment fn = op(mw.get(ADDRESS, Mw.MW_CONTEXT).address(), Mw.OP_BIND);
        if (fn.equals(MemorySegment.NULL)) {
            return Errno.EOPNOTSUPP;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bind = arena.allocate(Structs.IBV_MW_BIND);
            bind.set(JAVA_LONG, Mw.MWB_WR_ID, wrId);
            bind.set(JAVA_INT, Mw.MWB_FLAGS, sendFlags);
            bind.set(JAVA_LONG, Mw.MWB_MR, mr);
            bind.set(JAVA_LONG, Mw.MWB_ADDR, addr);
            bind.set(JAVA_LONG, Mw.MWB_LENGTH, length);
            bind.set(JAVA_INT, Mw.MWB_ACCESS, access);
            MemorySegment errno = Native.errnoSlot(arena);
            int rc = (int) Mw.BIND.invokeExact(fn, errno, MemorySegment.ofAddress(qp), mw, bind);
            return rc == 0 ? 0 : Native.errorCode(rc, Native.errno(errno));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * A window's {@code rkey} as the provider keeps it (the key the device holds after the last bind posted).
     *
     * @param mw the {@code struct ibv_mw}
     * @return its rkey
     */
    public static int mwRkey(MemorySegment mw) {
        return mw.get(JAVA_INT, Mw.MW_RKEY);
    }

    /**
     * Sets a window's {@code rkey} in its {@code struct ibv_mw}: what a type 2 window's owner does after posting a
     * bind with a new key, since the provider (rxe) reads it as the window's current key at the next bind.
     *
     * @param mw   the {@code struct ibv_mw}
     * @param rkey its new rkey
     */
    public static void mwRkey(MemorySegment mw, int rkey) {
        mw.set(JAVA_INT, Mw.MW_RKEY, rkey);
    }

    /** {@code ibv_wc_status_str}. */
    public static String wcStatusStr(int status) {
        Libibverbs.ensureLoaded();
        try {
            return ((MemorySegment) H.WC_STATUS_STR.invokeExact(status)).reinterpret(128).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static final long MR_LKEY = CLayouts.offset(Structs.IBV_MR, "lkey");
    private static final long MR_RKEY = CLayouts.offset(Structs.IBV_MR, "rkey");

    /**
     * A registered region's local key.
     *
     * @param mr the {@code struct ibv_mr}
     * @return its {@code lkey}
     */
    public static int mrLkey(MemorySegment mr) {
        return mr.get(JAVA_INT, MR_LKEY);
    }

    /**
     * A registered region's remote key.
     *
     * @param mr the {@code struct ibv_mr}
     * @return its {@code rkey}
     */
    public static int mrRkey(MemorySegment mr) {
        return mr.get(JAVA_INT, MR_RKEY);
    }
}
