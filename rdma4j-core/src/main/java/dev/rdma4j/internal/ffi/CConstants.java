package dev.rdma4j.internal.ffi;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * The C numbers rdma4j's code tests against or passes to C outside the layouts (errnos, {@code enum
 * ibv_qp_attr_mask} bits), each named as in C, and {@link #all()}: every C constant of {@code internal.ffi} with the C
 * expression gcc evaluates for it, which {@code LayoutConformanceTest} compiles and compares (the errnos of
 * {@code <errno.h>}, epoll, eventfd, fcntl and poll flags, the work requests' opcodes and send flags, the QP
 * attribute mask, rdma_cm's port space, and every constant of {@link CEnums} and {@link Errno}).
 *
 * <p>Threading: constants only.
 */
public final class CConstants {
    private CConstants() {
    }

    /** {@code EINVAL}: an invalid argument (a post in the wrong state, too many SGEs or inline bytes). */
    public static final int EINVAL = Errno.EINVAL;
    /** {@code ENODATA}: an empty GID table entry. */
    public static final int ENODATA = Errno.ENODATA;
    /** {@code EIO}: what a failed {@code ibv_poll_cq} is reported as when it gives no errno of its own. */
    public static final int EIO = Errno.EIO;
    /** {@code ENODEV}: no such device. */
    public static final int ENODEV = Errno.ENODEV;
    /** {@code EOVERFLOW}: the provider granted more than rdma4j can hold. */
    public static final int EOVERFLOW = 75;

    // enum ibv_qp_attr_mask
    /** {@code IBV_QP_STATE}. */
    public static final int IBV_QP_STATE = 1;
    /** {@code IBV_QP_ACCESS_FLAGS}. */
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    /** {@code IBV_QP_PKEY_INDEX}. */
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    /** {@code IBV_QP_PORT}. */
    public static final int IBV_QP_PORT = 1 << 5;
    /** {@code IBV_QP_QKEY}. */
    public static final int IBV_QP_QKEY = 1 << 6;
    /** {@code IBV_QP_AV}. */
    public static final int IBV_QP_AV = 1 << 7;
    /** {@code IBV_QP_PATH_MTU}. */
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    /** {@code IBV_QP_TIMEOUT}. */
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    /** {@code IBV_QP_RETRY_CNT}. */
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    /** {@code IBV_QP_RNR_RETRY}. */
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    /** {@code IBV_QP_RQ_PSN}. */
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    /** {@code IBV_QP_MAX_QP_RD_ATOMIC}. */
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    /** {@code IBV_QP_MIN_RNR_TIMER}. */
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    /** {@code IBV_QP_SQ_PSN}. */
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    /** {@code IBV_QP_MAX_DEST_RD_ATOMIC}. */
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    /** {@code IBV_QP_CAP}. */
    public static final int IBV_QP_CAP = 1 << 19;
    /** {@code IBV_QP_DEST_QPN}. */
    public static final int IBV_QP_DEST_QPN = 1 << 20;
    /** Every attribute {@code ibv_query_qp} can be asked for: {@code IBV_QP_DEST_QPN} and every bit below it. */
    public static final int IBV_QP_QUERY_ALL = (IBV_QP_DEST_QPN << 1) - 1;

    /**
     * The C constants of this package outside {@link CEnums} and {@link Errno}, each with the C expression whose value
     * gcc must give it.
     *
     * @return pairs {C expression, Java value (Long)}
     */
    static List<Object[]> constants() {
        return List.of(
                c("EINTR", Libc.EINTR), c("EAGAIN", Libc.EAGAIN), c("ENOMEM", Libc.ENOMEM), c("EINVAL", EINVAL),
                c("ENODATA", ENODATA), c("EIO", EIO), c("ENODEV", ENODEV), c("EOVERFLOW", EOVERFLOW),
                c("EPOLLIN", Libc.EPOLLIN), c("EPOLLERR", Libc.EPOLLERR), c("EPOLLHUP", Libc.EPOLLHUP),
                c("EPOLLET", Integer.toUnsignedLong(Libc.EPOLLET)) /* 1u << 31 */, c("EPOLL_CTL_ADD", Libc.EPOLL_CTL_ADD),
                c("EPOLL_CTL_DEL", Libc.EPOLL_CTL_DEL), c("EPOLL_CLOEXEC", Libc.EPOLL_CLOEXEC),
                c("EFD_NONBLOCK", Libc.EFD_NONBLOCK), c("EFD_CLOEXEC", Libc.EFD_CLOEXEC),
                c("F_GETFL", Libc.F_GETFL), c("F_SETFL", Libc.F_SETFL), c("O_NONBLOCK", Libc.O_NONBLOCK),
                c("IBV_WR_RDMA_WRITE", WrView.WR_RDMA_WRITE), c("IBV_WR_RDMA_WRITE_WITH_IMM",
                        WrView.WR_RDMA_WRITE_WITH_IMM), c("IBV_WR_SEND", WrView.WR_SEND),
                c("IBV_WR_SEND_WITH_IMM", WrView.WR_SEND_WITH_IMM), c("IBV_WR_RDMA_READ", WrView.WR_RDMA_READ),
                c("IBV_WR_ATOMIC_CMP_AND_SWP", WrView.WR_ATOMIC_CMP_AND_SWP),
                c("IBV_WR_ATOMIC_FETCH_AND_ADD", WrView.WR_ATOMIC_FETCH_AND_ADD),
                c("IBV_WR_LOCAL_INV", WrView.WR_LOCAL_INV), c("IBV_WR_BIND_MW", WrView.WR_BIND_MW),
                c("IBV_WR_SEND_WITH_INV", WrView.WR_SEND_WITH_INV), c("IBV_WR_ATOMIC_WRITE", WrView.WR_ATOMIC_WRITE),
                c("IBV_QP_INIT_ATTR_PD", QpExVerbs.IBV_QP_INIT_ATTR_PD),
                c("IBV_QP_INIT_ATTR_SEND_OPS_FLAGS", QpExVerbs.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS),
                c("IBV_QP_EX_WITH_RDMA_WRITE", QpExVerbs.IBV_QP_EX_WITH_RDMA_WRITE),
                c("IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM", QpExVerbs.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM),
                c("IBV_QP_EX_WITH_SEND", QpExVerbs.IBV_QP_EX_WITH_SEND),
                c("IBV_QP_EX_WITH_SEND_WITH_IMM", QpExVerbs.IBV_QP_EX_WITH_SEND_WITH_IMM),
                c("IBV_QP_EX_WITH_RDMA_READ", QpExVerbs.IBV_QP_EX_WITH_RDMA_READ),
                c("IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP", QpExVerbs.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP),
                c("IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD", QpExVerbs.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
                c("IBV_QP_EX_WITH_LOCAL_INV", QpExVerbs.IBV_QP_EX_WITH_LOCAL_INV),
                c("IBV_QP_EX_WITH_BIND_MW", QpExVerbs.IBV_QP_EX_WITH_BIND_MW),
                c("IBV_QP_EX_WITH_SEND_WITH_INV", QpExVerbs.IBV_QP_EX_WITH_SEND_WITH_INV),
                c("IBV_QP_EX_WITH_ATOMIC_WRITE", QpExVerbs.IBV_QP_EX_WITH_ATOMIC_WRITE),
                c("IBV_SEND_FENCE", WrView.SEND_FENCE), c("IBV_SEND_SIGNALED", WrView.SEND_SIGNALED),
                c("IBV_SEND_SOLICITED", WrView.SEND_SOLICITED), c("IBV_SEND_INLINE", WrView.SEND_INLINE),
                c("IBV_QP_STATE", IBV_QP_STATE), c("IBV_QP_ACCESS_FLAGS", IBV_QP_ACCESS_FLAGS),
                c("IBV_QP_PKEY_INDEX", IBV_QP_PKEY_INDEX), c("IBV_QP_PORT", IBV_QP_PORT),
                c("IBV_QP_QKEY", IBV_QP_QKEY), c("IBV_QP_AV", IBV_QP_AV), c("IBV_QP_PATH_MTU", IBV_QP_PATH_MTU),
                c("IBV_QP_TIMEOUT", IBV_QP_TIMEOUT), c("IBV_QP_RETRY_CNT", IBV_QP_RETRY_CNT),
                c("IBV_QP_RNR_RETRY", IBV_QP_RNR_RETRY), c("IBV_QP_RQ_PSN", IBV_QP_RQ_PSN),
                c("IBV_QP_MAX_QP_RD_ATOMIC", IBV_QP_MAX_QP_RD_ATOMIC),
                c("IBV_QP_MIN_RNR_TIMER", IBV_QP_MIN_RNR_TIMER), c("IBV_QP_SQ_PSN", IBV_QP_SQ_PSN),
                c("IBV_QP_MAX_DEST_RD_ATOMIC", IBV_QP_MAX_DEST_RD_ATOMIC), c("IBV_QP_CAP", IBV_QP_CAP),
                c("IBV_QP_DEST_QPN", IBV_QP_DEST_QPN),
                c("(IBV_QP_DEST_QPN << 1) - 1", IBV_QP_QUERY_ALL),
                c("IBV_SRQ_MAX_WR", AhSrqCqAttrs.IBV_SRQ_MAX_WR), c("IBV_SRQ_LIMIT", AhSrqCqAttrs.IBV_SRQ_LIMIT),
                c("RDMA_PS_TCP", RdmaCm.RDMA_PS_TCP), c("RDMA_PS_UDP", RdmaCm.RDMA_PS_UDP),
                c("RDMA_CM_JOIN_MC_ATTR_ADDRESS", RdmaCm.RDMA_CM_JOIN_MC_ATTR_ADDRESS),
                c("RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS", RdmaCm.RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS),
                c("RDMA_MC_JOIN_FLAG_FULLMEMBER", RdmaCm.RDMA_MC_JOIN_FLAG_FULLMEMBER),
                c("RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER", RdmaCm.RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER),
                c("RDMA_UDP_QKEY", RdmaCm.RDMA_UDP_QKEY));
    }

    /**
     * {@link #constants()} and every constant of {@link CEnums} and {@link Errno} by its field's name (which is its C
     * name), and every entry of {@link Errno}'s name table: the list {@code LayoutConformanceTest} has gcc evaluate.
     *
     * @return pairs {C expression, Java value (Long)}
     */
    public static List<Object[]> all() {
        List<Object[]> all = new ArrayList<>(constants());
        for (Class<?> c : List.of(CEnums.class, Errno.class)) {
            for (Field f : c.getFields()) {
                if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                    try {
                        all.add(c(f.getName(), f.getInt(null)));
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        }
        all.addAll(Errno.NAMED);
        return all;
    }

    private static Object[] c(String expression, long value) {
        return new Object[] {expression, value};
    }
}
