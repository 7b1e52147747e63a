package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few libc calls the completion engine needs: epoll, eventfd, fcntl, read/write/close. Each returns
 * the C result; a negative result is {@code -errno} (captured), so callers see status codes, not exceptions.
 */
@SuppressWarnings("restricted")
public final class Libc {
    public static final int EPOLLIN = 0x001;
    public static final int EPOLLERR = 0x008;
    public static final int EPOLLHUP = 0x010;
    public static final int EPOLLET = 1 << 31;
    public static final int EPOLL_CTL_ADD = 1;
    public static final int EPOLL_CTL_DEL = 2;
    public static final int EPOLL_CLOEXEC = 0x80000;
    public static final int EFD_NONBLOCK = 0x800;
    public static final int EFD_CLOEXEC = 0x80000;
    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int O_NONBLOCK = 0x800;
    public static final int EAGAIN = Errno.EAGAIN;
    /** {@code ENOMEM}: out of memory. */
    public static final int ENOMEM = Errno.ENOMEM;
    public static final int EINTR = Errno.EINTR;
    public static final int POLLIN = 0x1;

    /** {@code struct pollfd}. */
    public static final StructLayout POLLFD = CLayouts.struct("struct pollfd",
            ValueLayout.JAVA_INT.withName("fd"),
            ValueLayout.JAVA_SHORT.withName("events"),
            ValueLayout.JAVA_SHORT.withName("revents"));

    /** {@code struct epoll_event}: packed on x86-64, so 12 bytes with {@code data} unaligned. */
    public static final StructLayout EPOLL_EVENT = CLayouts.struct("struct epoll_event",
            ValueLayout.JAVA_INT.withName("events"),
            ValueLayout.JAVA_LONG_UNALIGNED.withName("data"));

    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final SymbolLookup C = Native.LINKER.defaultLookup();
    /*
     * The downcall handles, in holders by use, each made when first used: a handle costs class generation at
     * start-up (~0.05 s each in the emulated guest), and opening a device needs fcntl alone (devinfo, the tools).
     */
    private static final class Epoll {
        static final MethodHandle CREATE1 = h("epoll_create1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        static final MethodHandle CTL = h("epoll_ctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
                ADDRESS));
        static final MethodHandle WAIT = h("epoll_wait", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT));
        /*
         * epoll_wait without the errno capture, for the engine's every turn: a captured call slices the capture
         * segment each time, an allocation that C1 (the guest's compiler) does not elide. errno is read, through
         * the capturing twin, only after a failure.
         */
        static final MethodHandle WAIT_PLAIN = Native.LINKER.downcallHandle(C.find("epoll_wait").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    }

    private static final class Poll {
        static final MethodHandle POLL = h("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        /** poll without the errno capture, as epoll_wait's. */
        static final MethodHandle PLAIN = Native.LINKER.downcallHandle(C.find("poll").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    }

    private static final class Fd {
        static final MethodHandle EVENTFD = h("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        static final MethodHandle READ = h("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
        static final MethodHandle WRITE = h("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
        static final MethodHandle CLOSE = h("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private static final class Fcntl {
        static final MethodHandle FCNTL = Native.LINKER.downcallHandle(C.find("fcntl").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), ERRNO,
                Linker.Option.firstVariadicArg(2));
    }

    private Libc() {
    }

    private static MethodHandle h(String name, FunctionDescriptor fd) {
        return Native.LINKER.downcallHandle(C.find(name).orElseThrow(), fd, ERRNO);
    }

    /**
     * Per-thread errno capture slot, so calls allocate nothing. In an automatic arena: freed once its thread has
     * ended (the global arena kept one per thread that ever called, a leak of every engine's thread and every
     * virtual thread; the leak test's 10,000 engine cycles showed it in NMT's "Other").
     */
    private static final ThreadLocal<MemorySegment> SLOT = ThreadLocal.withInitial(
            () -> Native.errnoSlot(Arena.ofAuto()));

    private static int result(long rc, MemorySegment slot) {
        return rc < 0 ? -Native.errno(slot) : (int) rc;
    }

    public static int epollCreate() {
        MemorySegment s = SLOT.get();
        try {
            return result((int) Epoll.CREATE1.invokeExact(s, EPOLL_CLOEXEC), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** epoll_ctl with an event of {@code events} carrying {@code data}; {@code scratch} holds the struct. */
    public static int epollCtl(int epfd, int op, int fd, int events, long data, MemorySegment scratch) {
        MemorySegment s = SLOT.get();
        scratch.set(ValueLayout.JAVA_INT, 0, events);
        scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, 4, data);
        try {
            return result((int) Epoll.CTL.invokeExact(s, epfd, op, fd, scratch), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Blocks (a platform thread) until events or the timeout (-1: none); returns the count or -errno. Allocates
     * nothing unless the call fails: then it asks once more, without waiting, through the errno-capturing handle
     * (the count of that call if it succeeds, else its -errno).
     */
    public static int epollWait(int epfd, MemorySegment events, int max, int timeoutMs) {
        try {
            int n = (int) Epoll.WAIT_PLAIN.invokeExact(epfd, events, max, timeoutMs);
            if (n >= 0) {
                return n;
            }
            MemorySegment s = SLOT.get();
            return result((int) Epoll.WAIT.invokeExact(s, epfd, events, max, 0), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Whether {@code fd} is readable now ({@code poll(2)} for {@code POLLIN} with timeout 0), allocating nothing;
     * {@code true} also when poll fails or reports an error condition, so that the caller's next call finds out.
     */
    public static boolean readableNow(int fd, MemorySegment pollfd) {
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        try {
            return (int) Poll.PLAIN.invokeExact(pollfd, 1L, 0) != 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code poll(2)} on one fd for {@code events}; {@code pollfd} is a {@link #POLLFD} the caller owns.
     * Returns 1 when ready, 0 at the timeout (ms; -1: none), or -errno.
     */
    public static int poll(int fd, int events, int timeoutMs, MemorySegment pollfd) {
        MemorySegment s = SLOT.get();
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, (short) events);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        try {
            return result((int) Poll.POLL.invokeExact(s, pollfd, 1L, timeoutMs), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static long eventData(MemorySegment events, int i) {
        return events.get(ValueLayout.JAVA_LONG_UNALIGNED, i * EPOLL_EVENT.byteSize() + 4);
    }

    public static int eventFlags(MemorySegment events, int i) {
        return events.get(ValueLayout.JAVA_INT, i * EPOLL_EVENT.byteSize());
    }

    public static int eventfd() {
        MemorySegment s = SLOT.get();
        try {
            return result((int) Fd.EVENTFD.invokeExact(s, 0, EFD_NONBLOCK | EFD_CLOEXEC), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Sets O_NONBLOCK on {@code fd}; 0 or -errno. */
    public static int setNonBlocking(int fd) {
        MemorySegment s = SLOT.get();
        try {
            int flags = (int) Fcntl.FCNTL.invokeExact(s, fd, F_GETFL, 0);
            if (flags < 0) {
                return -Native.errno(s);
            }
            return result((int) Fcntl.FCNTL.invokeExact(s, fd, F_SETFL, flags | O_NONBLOCK), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int getFlags(int fd) {
        MemorySegment s = SLOT.get();
        try {
            return result((int) Fcntl.FCNTL.invokeExact(s, fd, F_GETFL, 0), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int read(int fd, MemorySegment buf, long n) {
        MemorySegment s = SLOT.get();
        try {
            return result((long) Fd.READ.invokeExact(s, fd, buf, n), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int write(int fd, MemorySegment buf, long n) {
        MemorySegment s = SLOT.get();
        try {
            return result((long) Fd.WRITE.invokeExact(s, fd, buf, n), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int close(int fd) {
        MemorySegment s = SLOT.get();
        try {
            return result((int) Fd.CLOSE.invokeExact(s, fd), s);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
