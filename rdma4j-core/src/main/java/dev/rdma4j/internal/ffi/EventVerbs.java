package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Completion-channel and async-event verbs. The channel and context fds are non-blocking, so
 * {@code ibv_get_cq_event} and {@code ibv_get_async_event} return at once: {@code -EAGAIN} means none.
 */
@SuppressWarnings("restricted")
public final class EventVerbs {
    private EventVerbs() {
    }

    private static final class H {
        static final SymbolLookup L = Libibverbs.lookup();
        static final MethodHandle GET_CQ_EVENT = Native.downcall(L, "ibv_get_cq_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
        /** Without errno capture (which allocates per call under C1): tried first, see {@code getCqEvent}. */
        static final MethodHandle GET_CQ_EVENT_PLAIN = Native.downcall(L, "ibv_get_cq_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), false);
        static final MethodHandle ACK_CQ_EVENTS = Native.downcall(L, "ibv_ack_cq_events",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
        static final MethodHandle GET_ASYNC_EVENT = Native.downcall(L, "ibv_get_async_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
        static final MethodHandle ACK_ASYNC_EVENT = Native.downcall(L, "ibv_ack_async_event",
                FunctionDescriptor.ofVoid(ADDRESS), false);
        static final MethodHandle EVENT_TYPE_STR = Native.downcall(L, "ibv_event_type_str",
                FunctionDescriptor.of(ADDRESS, JAVA_INT), false);
    }

    /** Scratch memory for one caller thread (the engine's): errno slot, out-pointers, async event. */
    public static final class Scratch {
        final MemorySegment errno;
        final MemorySegment cqOut;
        final MemorySegment ctxOut;
        final MemorySegment asyncEvent;
        final MemorySegment pollfd;

        public Scratch(Arena arena) {
            errno = Native.errnoSlot(arena);
            cqOut = arena.allocate(ADDRESS);
            ctxOut = arena.allocate(ADDRESS);
            asyncEvent = arena.allocate(Structs.IBV_ASYNC_EVENT);
            pollfd = arena.allocate(Libc.POLLFD);
        }
    }

    /**
     * {@code ibv_get_cq_event}: the address of the CQ that has an event, 0 when none is pending
     * (EAGAIN), or minus the errno of a failure. Allocates nothing on the usual paths: when the channel's
     * {@code fd} is not readable ({@code poll(2)}, timeout 0) there is no event; when it is, the verb is called
     * without errno capture, and only if it fails once more with the capture, for the errno.
     *
     * @param fd       the channel's fd, or -1 to call the capturing verb at once
     * @param readable the caller's epoll has just reported {@code fd} readable: the first read goes without asking
     *                 {@code poll(2)} (one system call less a wake-up); if nothing is pending after all (an edge of an
     *                 event already taken), the capturing twin reads EAGAIN
     */
    public static long getCqEvent(MemorySegment channel, int fd, boolean readable, Scratch s) {
        Libibverbs.ensureLoaded();
        try {
            if (fd >= 0) {
                if (!readable && !Libc.readableNow(fd, s.pollfd)) {
                    return 0;
                }
                if ((int) H.GET_CQ_EVENT_PLAIN.invokeExact(channel, s.cqOut, s.ctxOut) == 0) {
                    return s.cqOut.get(ValueLayout.JAVA_LONG, 0);
                }
            }
            int rc = (int) H.GET_CQ_EVENT.invokeExact(s.errno, channel, s.cqOut, s.ctxOut);
            if (rc != 0) {
                int e = Native.errno(s.errno);
                return e == Libc.EAGAIN ? 0 : -e;
            }
            return s.cqOut.get(ValueLayout.JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static void ackCqEvents(MemorySegment cq, int n) {
        try {
            H.ACK_CQ_EVENTS.invokeExact(cq, n);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code ibv_get_async_event}, without acknowledging it: while it is unacknowledged, {@code ibv_destroy_qp}
     * (and _cq, _srq) of its element waits, so the element's address cannot be reused before the caller has
     * resolved it. The caller must then call {@link #ackAsyncEvent} (before delivering it to listeners, which may
     * destroy the element). Returns false when no event is pending; fills {@code out} = {type, element
     * address, port number}.
     */
    public static boolean nextAsyncEvent(MemorySegment ctx, Scratch s, long[] out) {
        Libibverbs.ensureLoaded();
        try {
            int rc = (int) H.GET_ASYNC_EVENT.invokeExact(s.errno, ctx, s.asyncEvent);
            if (rc != 0) {
                return false;
            }
            out[0] = s.asyncEvent.get(ValueLayout.JAVA_INT, CLayouts.offset(Structs.IBV_ASYNC_EVENT, "event_type"));
            out[1] = s.asyncEvent.get(ValueLayout.JAVA_LONG, 0);
            out[2] = s.asyncEvent.get(ValueLayout.JAVA_INT, 0);
            return true;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_ack_async_event} of the event {@link #nextAsyncEvent} last read into {@code s}. */
    public static void ackAsyncEvent(Scratch s) {
        try {
            H.ACK_ASYNC_EVENT.invokeExact(s.asyncEvent);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static String eventTypeStr(int type) {
        try {
            return ((MemorySegment) H.EVENT_TYPE_STR.invokeExact(type)).reinterpret(128).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int channelFd(MemorySegment channel) {
        return channel.get(JAVA_INT, CLayouts.offset(Structs.IBV_COMP_CHANNEL, "fd"));
    }

    public static int asyncFd(MemorySegment ctx) {
        return ctx.get(JAVA_INT, CLayouts.offset(Structs.IBV_CONTEXT, "async_fd"));
    }
}
