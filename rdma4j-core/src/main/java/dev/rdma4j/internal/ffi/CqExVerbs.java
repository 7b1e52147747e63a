package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The extended completion queue ({@code struct ibv_cq_ex}): its creation ({@code ibv_create_cq_ex} through
 * {@code verbs_context->create_cq_ex}, as verbs.h's inline) and its polling ({@code ibv_start_poll},
 * {@code ibv_next_poll}, {@code ibv_end_poll} and the {@code ibv_wc_read_*} accessors, which verbs.h defines inline as
 * calls of the CQ's function pointers), entry by entry into an {@code ibv_wc} array, so that everything that reads
 * completions (the engine included) reads them as from {@code ibv_poll_cq}. An extended CQ is also a plain one
 * ({@code ibv_cq_ex_to_cq} is a cast): arming, events and destruction are the plain verbs'.
 *
 * <p>Threading: a {@link Poller} is used under its CQ's poll lock.
 */
@SuppressWarnings("restricted")
public final class CqExVerbs {
    private CqExVerbs() {
    }

    private static final int ENOENT = 2;
    private static final long STATUS = CLayouts.offset(Structs.IBV_CQ_EX, "status");
    private static final long WR_ID = CLayouts.offset(Structs.IBV_CQ_EX, "wr_id");

    private static final class H {
        static final Linker.Option CRITICAL = Linker.Option.critical(false);
        static final MethodHandle CREATE = Native.pointerCallWithErrno(FunctionDescriptor.of(ADDRESS, ADDRESS,
                ADDRESS));
        static final MethodHandle START = Native.LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_LONG,
                JAVA_LONG), CRITICAL);
        static final MethodHandle INT = Native.LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_LONG),
                CRITICAL);
        static final MethodHandle VOID = Native.LINKER.downcallHandle(FunctionDescriptor.ofVoid(JAVA_LONG), CRITICAL);
        static final MethodHandle BYTE = Native.LINKER.downcallHandle(FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG),
                CRITICAL);
        static final MethodHandle LONG = Native.LINKER.downcallHandle(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG),
                CRITICAL);
    }

    /**
     * verbs.h's {@code ibv_create_cq_ex}.
     *
     * @return the {@code struct ibv_cq_ex} (also the {@code struct ibv_cq})
     * @throws NativeException {@code EOPNOTSUPP} when the provider has none, else the verb's errno
     */
    public static MemorySegment createCqEx(MemorySegment ctx, int cqe, MemorySegment channel, int vector, long wcFlags)
            throws NativeException {
        MemorySegment op = DeviceVerbs.verbsContextOp(ctx, Structs.VERBS_CONTEXT_CREATE_CQ_EX_OFFSET);
        if (op == null) {
            throw Native.fail("ibv_create_cq_ex", Errno.EOPNOTSUPP, "the provider has no extended completion queues");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Structs.IBV_CQ_INIT_ATTR_EX);
            var l = Structs.IBV_CQ_INIT_ATTR_EX;
            attr.set(JAVA_INT, CLayouts.offset(l, "cqe"), cqe);
            attr.set(ADDRESS, CLayouts.offset(l, "channel"), channel);
            attr.set(JAVA_INT, CLayouts.offset(l, "comp_vector"), vector);
            attr.set(JAVA_LONG, CLayouts.offset(l, "wc_flags"), wcFlags);
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment cq = (MemorySegment) H.CREATE.invokeExact(op, errno, ctx, attr);
            if (cq.equals(MemorySegment.NULL)) {
                throw Native.fail("ibv_create_cq_ex", Native.errorCode(-1, Native.errno(errno)), cqe + " entries,"
                        + " wc_flags 0x" + Long.toHexString(wcFlags));
            }
            return cq.reinterpret(Structs.IBV_CQ_EX.byteSize());
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The poll functions of one extended CQ, read once. */
    public static final class Poller {
        private final MemorySegment cq;
        private final long address;
        private final MemorySegment start;
        private final MemorySegment end;
        private final MemorySegment opcode;
        private final MemorySegment vendorErr;
        private final MemorySegment byteLen;
        private final MemorySegment imm;
        private final MemorySegment qpNum;
        private final MemorySegment srcQp;
        private final MemorySegment wcFlags;
        private final MemorySegment slid;
        private final MemorySegment sl;
        private final MemorySegment dlidPathBits;
        private final MemorySegment timestamp;
        /** {@code struct ibv_poll_cq_attr}, zero ({@code comp_mask} 0). */
        private final MemorySegment attr = Arena.ofAuto().allocate(4, 4);
        /** Whether the last {@link #poll} stopped at an error after taking some entries (its count is short). */
        private boolean stoppedOnError;

        /**
         * @param cq         the {@code struct ibv_cq_ex}, created with {@code IBV_WC_STANDARD_FLAGS}
         * @param timestamps whether it was created with {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}
         */
        public Poller(MemorySegment cq, boolean timestamps) {
            this.cq = cq;
            this.address = cq.address();
            this.start = fn("start_poll");
            this.end = fn("end_poll");
            this.opcode = fn("read_opcode");
            this.vendorErr = fn("read_vendor_err");
            this.byteLen = fn("read_byte_len");
            this.imm = fn("read_imm_data");
            this.qpNum = fn("read_qp_num");
            this.srcQp = fn("read_src_qp");
            this.wcFlags = fn("read_wc_flags");
            this.slid = fn("read_slid");
            this.sl = fn("read_sl");
            this.dlidPathBits = fn("read_dlid_path_bits");
            this.timestamp = timestamps ? fn("read_completion_ts") : null;
        }

        private MemorySegment fn(String member) {
            MemorySegment f = cq.get(ADDRESS, CLayouts.offset(Structs.IBV_CQ_EX, member));
            if (f.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("the provider set no " + member + " for an extended CQ");
            }
            return f;
        }

        /**
         * Up to {@code max} entries into {@code wcs} ({@code ibv_wc} layout), their completion timestamps into
         * {@code timestamps} when the CQ has them: the count, or a negative errno when the CQ failed. Allocation-free.
         *
         * <p>One entry per {@code ibv_start_poll} ... {@code ibv_end_poll}, never {@code ibv_next_poll}: rxe before
         * rdma-core 59 (Debian 12 has 44) consumed an entry and unlocked the CQ in {@code next_poll}'s "empty" answer,
         * and then {@code end_poll}, which the man page says to call, consumed one more and unlocked again: the
         * consumer index passed the producer's and later polls read stale entries (rdma-core 5e7aa4102). With one
         * entry a cycle both versions do the right thing.
         */
        public int poll(int max, MemorySegment wcs, long[] timestamps) {
            try {
                int n = 0;
                stoppedOnError = false;
                while (n < max) {
                    int rc = (int) H.START.invokeExact(start, address, attr.address());
                    if (rc == ENOENT) {
                        break;
                    }
                    if (rc != 0) {
                        stoppedOnError = n > 0; // the error comes back at the next poll
                        return n > 0 ? n : -rc;
                    }
                    try {
                        read(wcs, n, timestamps);
                    } finally {
                        H.VOID.invokeExact(end, address);
                    }
                    n++;
                }
                return n;
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }

        /**
         * Whether the last {@link #poll} stopped at an error after taking some entries: its count is short, yet the
         * CQ was not found empty.
         *
         * @return true after such a poll
         */
        public boolean stoppedOnError() {
            return stoppedOnError;
        }

        /** The current entry into slot {@code i}: the fields a failed completion has, or all of them. */
        private void read(MemorySegment wcs, int i, long[] timestamps) throws Throwable {
            long id = cq.get(JAVA_LONG, WR_ID);
            int status = cq.get(JAVA_INT, STATUS);
            int vendor = (int) H.INT.invokeExact(vendorErr, address);
            if (status != CEnums.IBV_WC_SUCCESS) { // only wr_id, status and vendor_err are defined
                WcView.fill(wcs, i, id, status, 0, vendor, 0, 0, 0, 0, 0, 0, 0, 0);
            } else {
                WcView.fill(wcs, i, id, status, (int) H.INT.invokeExact(opcode, address), vendor,
                        (int) H.INT.invokeExact(byteLen, address), (int) H.INT.invokeExact(imm, address),
                        (int) H.INT.invokeExact(qpNum, address), (int) H.INT.invokeExact(srcQp, address),
                        (int) H.INT.invokeExact(wcFlags, address), (int) H.INT.invokeExact(slid, address),
                        Byte.toUnsignedInt((byte) H.BYTE.invokeExact(sl, address)),
                        Byte.toUnsignedInt((byte) H.BYTE.invokeExact(dlidPathBits, address)));
            }
            if (timestamps != null) {
                timestamps[i] = timestamp != null && status == CEnums.IBV_WC_SUCCESS
                        ? (long) H.LONG.invokeExact(timestamp, address) : 0;
            }
        }
    }
}
