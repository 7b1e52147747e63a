package dev.rdma4j.internal.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/** Linker plumbing shared by the bindings: downcall handles, errno capture, strerror. */
@SuppressWarnings("restricted")
public final class Native {
    public static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(
            java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** strerror_r, made when an error is first described (a handle costs class generation at start-up). */
    private static final class Strerror {
        static final MethodHandle STRERROR_R = LINKER.downcallHandle(
                LINKER.defaultLookup().find("strerror_r").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG));
    }

    private Native() {
    }

    /** A downcall to a required symbol; with {@code errno}, the handle takes the capture segment first. */
    public static MethodHandle downcall(SymbolLookup lib, String name, FunctionDescriptor fd, boolean errno) {
        MemorySegment symbol = lib.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError("symbol " + name + " not found in " + Libibverbs.libraryName()));
        return errno ? LINKER.downcallHandle(symbol, fd, CAPTURE_ERRNO) : LINKER.downcallHandle(symbol, fd);
    }

    /** A downcall to a symbol that older libraries lack, or null. */
    public static MethodHandle optionalDowncall(SymbolLookup lib, String name, FunctionDescriptor fd) {
        return lib.find(name).map(s -> LINKER.downcallHandle(s, fd)).orElse(null);
    }

    /** A handle that calls through a function pointer (the first argument), as the static inline verbs do. */
    public static MethodHandle pointerCall(FunctionDescriptor fd) {
        return LINKER.downcallHandle(fd);
    }

    /**
     * A handle that calls through a function pointer (the first argument) and captures errno (the second argument,
     * a segment from {@link #errnoSlot}), for the static inline verbs that return NULL or -1 with errno set.
     */
    public static MethodHandle pointerCallWithErrno(FunctionDescriptor fd) {
        return LINKER.downcallHandle(fd, CAPTURE_ERRNO);
    }

    /** A fresh errno capture segment in {@code arena}. */
    public static MemorySegment errnoSlot(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    public static int errno(MemorySegment slot) {
        return (int) ERRNO.get(slot, 0L);
    }

    /** {@code strerror_r} (the GNU variant glibc exports under that name). */
    public static String strerror(int errno) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            MemorySegment text = (MemorySegment) Strerror.STRERROR_R.invokeExact(errno, buf, 256L);
            return text.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** The exception for a verb that failed with {@code errno}. */
    public static NativeException fail(String verb, int errno, String detail) {
        return new NativeException(verb, errno, strerror(errno), detail);
    }

    /**
     * Verbs returning an int report failure as a positive errno, a negative errno, or -1 with errno set;
     * this picks the real error number.
     */
    public static int errorCode(int rc, int capturedErrno) {
        if (rc > 0) {
            return rc;
        }
        if (rc < -1) {
            return -rc;
        }
        return capturedErrno != 0 ? capturedErrno : 5; // EIO: the verb gave no reason
    }

    /** A verb returning 0 on success, called with a fresh errno capture slot. */
    @FunctionalInterface
    public interface StatusCall {
        int call(MemorySegment errno) throws Throwable;
    }

    /**
     * Runs a status verb; a non-zero result becomes a {@link NativeException} with the verb, the errno
     * (the result itself or the captured errno, see {@link #errorCode}) and its text.
     */
    public static void check(String verb, String detail, StatusCall call) throws NativeException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = errnoSlot(arena);
            int rc = call.call(errno);
            if (rc != 0) {
                throw fail(verb, errorCode(rc, errno(errno)), detail);
            }
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Rethrows a Throwable from invokeExact: native calls throw nothing checked. */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
