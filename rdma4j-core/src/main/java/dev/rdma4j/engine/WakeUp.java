package dev.rdma4j.engine;

import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's wake-up eventfd, with Netty's two disciplines: wake-ups are coalesced (while one written is not yet
 * consumed by the engine's thread, more are not written), and the engine's fds are never closed under another
 * thread's use of them (a wake-up's {@code write(2)}, a blocking waiter's {@code epoll_ctl}: each counted between
 * {@link #enter()} and {@link #exit()}; the close waits for none to be in progress, then refuses new ones).
 *
 * <p>Threading: {@link #wake}, {@link #enter}, {@link #exit} and {@link #writes} from any thread; {@link #consume}
 * and the close on the engine's thread.
 */
final class WakeUp {
    /** {@link #users} once the fds are about to close: no more uses. */
    private static final int CLOSED = Integer.MIN_VALUE;

    /** The eventfd. */
    final int fd;
    private final MemorySegment one; // always 1: what wake() writes
    private final MemorySegment read; // the engine thread's
    /** A wake-up is written and not yet consumed by the engine thread: further ones are coalesced. */
    private final AtomicBoolean pending = new AtomicBoolean();
    /** Uses of the engine's fds by other threads in progress, or {@link #CLOSED}. */
    private final AtomicInteger users = new AtomicInteger();
    private final AtomicLong writes = new AtomicLong();

    /** Opens the eventfd ({@code eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)}); its memory from {@code arena}. */
    WakeUp(Arena arena) throws VerbsException {
        one = arena.allocate(ValueLayout.JAVA_LONG);
        read = arena.allocate(ValueLayout.JAVA_LONG);
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        int rc = Libc.eventfd();
        if (rc < 0) {
            throw VerbsException.of("eventfd", -rc, null);
        }
        fd = rc;
    }

    /** Wakes the engine's thread from {@code epoll_wait}, unless a wake-up is pending already or the fd closed. */
    void wake() {
        if (pending.get() || !pending.compareAndSet(false, true)) {
            return;
        }
        if (!enter()) {
            return;
        }
        try {
            Libc.write(fd, one, one.byteSize()); // eventfd's uint64_t counter
            writes.incrementAndGet();
        } finally {
            exit();
        }
    }

    /** The engine's thread took the wake-up: the counter is drained, and the next wake-up is written again. */
    void consume() {
        Libc.read(fd, read, read.byteSize());
        pending.set(false); // before the tasks run: a task queued after this writes a new wake-up
    }

    /** Eventfd writes so far (fewer than the wake-ups asked for). */
    long writes() {
        return writes.get();
    }

    /** Counts a use of the engine's fds by another thread: false once they are closing. */
    boolean enter() {
        for (;;) {
            int u = users.get();
            if (u < 0) {
                return false; // the engine thread is past its loop and closing its fds
            }
            if (users.compareAndSet(u, u + 1)) {
                return true;
            }
        }
    }

    /** Ends a use begun by {@link #enter()}. */
    void exit() {
        users.decrementAndGet();
    }

    /** Waits until no other thread uses the engine's fds (a write of 8 bytes: microseconds), then refuses more. */
    void closeUses() {
        while (!users.compareAndSet(0, CLOSED)) {
            Thread.onSpinWait();
        }
    }
}
