package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The hot verbs, which verbs.h defines {@code static inline}: {@code ibv_poll_cq}, {@code ibv_post_send},
 * {@code ibv_post_recv}, {@code ibv_post_srq_recv} and {@code ibv_req_notify_cq} call the provider's
 * function pointers in {@code context->ops}, and so does rdma4j. They return status codes, never throw.
 * Polling and posting are linked {@code critical} (no thread-state transition), which the JDK reserves for
 * short calls that never block. {@code ibv_req_notify_cq} is not one of them: on rxe (and other software
 * providers) it is a {@code write(2)} to the kernel, so it is an ordinary downcall.
 *
 * <p>The queue's handle and the {@code bad_wr} out-pointer go as raw addresses ({@code long}): their owner keeps
 * them alive for the call (it holds the lock its destroy takes first), and a segment argument costs a liveness
 * check and a session acquire and release per call. The request array and the completion array stay segments:
 * they belong to the caller's batch, which another thread may close, and the session acquired for the call is
 * what refuses that close while the device reads or writes them.
 */
@SuppressWarnings("restricted")
public final class DataPath {
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);
    private static final MethodHandle POLL_CQ = Native.LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS), CRITICAL);
    private static final MethodHandle POST = Native.LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG), CRITICAL);
    private static final MethodHandle REQ_NOTIFY_CQ = Native.LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    private static final long OPS = CLayouts.offset(Structs.IBV_CONTEXT, "ops");

    private DataPath() {
    }

    /** The provider's function pointer {@code context->ops.<name>}. */
    public static MemorySegment op(MemorySegment ctx, Op op) {
        return ctx.get(ADDRESS, OPS + CLayouts.offset(Structs.IBV_CONTEXT_OPS, op.member));
    }

    /** The data-path members of {@code struct ibv_context_ops} rdma4j calls through. */
    public enum Op {
        /** {@code poll_cq}. */
        POLL_CQ("poll_cq"),
        /** {@code req_notify_cq}. */
        REQ_NOTIFY_CQ("req_notify_cq"),
        /** {@code post_send}. */
        POST_SEND("post_send"),
        /** {@code post_recv}. */
        POST_RECV("post_recv"),
        /** {@code post_srq_recv}. */
        POST_SRQ_RECV("post_srq_recv");

        final String member;

        Op(String member) {
            this.member = member;
        }
    }

    /**
     * {@code ibv_poll_cq}: the number of completions written to {@code wc}, or a negative value on error.
     * {@code cq} is the {@code struct ibv_cq *}, which the caller keeps alive for the call.
     */
    public static int pollCq(MemorySegment fn, long cq, int max, MemorySegment wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, max, wc);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code ibv_post_send}/{@code ibv_post_recv}/{@code ibv_post_srq_recv}: 0 or an errno value. {@code queue}
     * (the QP or SRQ) and {@code badWr} (a pointer-sized cell) are addresses the caller keeps alive for the call.
     */
    public static int post(MemorySegment fn, long queue, MemorySegment firstWr, long badWr) {
        try {
            return (int) POST.invokeExact(fn, queue, firstWr, badWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_req_notify_cq}: 0 or an errno value. */
    public static int reqNotifyCq(MemorySegment fn, MemorySegment cq, boolean solicitedOnly) {
        try {
            return (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
