package dev.rdma4j;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Life cycle shared by every object that owns a native verbs handle: an idempotent, race-free
 * {@code close()} (one CAS wins), a refusal to close while children are open, use-after-close as
 * {@link IllegalStateException}, and leak reporting for objects collected while still open.
 *
 * <p>One counter does it all: {@code >= 0} counts live children plus calls in progress, {@code -1}
 * is closed, and the {@code CLOSING} bit, set by the one {@code close()} that won, refuses new calls
 * while those in progress finish. A call in progress keeps the handle alive, so no native call can race
 * a destroy, and callers acquiring in a tight loop cannot starve a close.
 */
abstract class NativeResource implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final int CLOSED = -1;
    /** Set while a close waits for the calls in progress: {@link #acquire} refuses. */
    private static final int CLOSING = 1 << 30;

    private final String description;
    private final NativeResource parent;
    private final Leak leak;
    private final AtomicInteger children = new AtomicInteger();
    private volatile boolean closeWhenIdle;

    /** Shared with the cleaner, which must not reach the resource itself. */
    private static final class Leak implements Runnable {
        final AtomicInteger users = new AtomicInteger();
        final String description;

        Leak(String description) {
            this.description = description;
        }

        @Override
        public void run() {
            if (users.get() != CLOSED) {
                System.getLogger("dev.rdma4j").log(System.Logger.Level.WARNING,
                        "LEAK: " + description + " was garbage-collected without close(); its native resources"
                                + " stay allocated until the process exits");
            }
        }
    }

    NativeResource(String description, NativeResource parent) {
        this.description = description;
        this.parent = parent;
        this.leak = new Leak(description);
        if (parent != null) {
            parent.acquire(true);
        }
        CLEANER.register(this, leak);
    }

    /** What this is, for messages: e.g. {@code "Context(rxe0)"}. */
    final String description() {
        return description;
    }

    /**
     * Marks a call in progress (or a new child); the handle cannot be destroyed until {@link #release}.
     *
     * @throws IllegalStateException if closed
     */
    final void acquire(boolean child) {
        AtomicInteger users = leak.users;
        for (;;) {
            int n = users.get();
            if (n == CLOSED) {
                throw new IllegalStateException(description + " is closed");
            }
            if ((n & CLOSING) != 0) {
                throw new IllegalStateException(description + " is closing");
            }
            if (users.compareAndSet(n, n + 1)) {
                if (child) {
                    children.incrementAndGet();
                }
                return;
            }
        }
    }

    /** Ends a call in progress, or a child's life. */
    final void release(boolean child) {
        int kids = child ? children.decrementAndGet() : -1;
        leak.users.decrementAndGet();
        if (kids == 0 && closeWhenIdle) {
            closeIfIdle();
        }
    }

    /**
     * Closes now if nothing depends on this object any more, or else as soon as the last object
     * created from it (or the last posted work request using it) is gone. For owners that cannot know
     * when their users are done, e.g. an engine's completion channels or an rdma_cm channel's contexts.
     */
    public final void closeWhenIdle() {
        closeWhenIdle = true;
        closeIfIdle();
    }

    private void closeIfIdle() {
        if (children.get() == 0) {
            try {
                close();
            } catch (IllegalStateException raced) {
                // a new child appeared meanwhile: its release will try again
            }
        }
    }

    /** @throws IllegalStateException if closed or closing */
    final void ensureOpen() {
        int n = leak.users.get();
        if (n == CLOSED) {
            throw new IllegalStateException(description + " is closed");
        }
        if ((n & CLOSING) != 0) {
            throw new IllegalStateException(description + " is closing");
        }
    }

    /**
     * Whether {@link #close()} has completed.
     *
     * @return {@code true} once closed
     */
    public final boolean isClosed() {
        return leak.users.get() == CLOSED;
    }

    /**
     * Destroys the native object. Idempotent: a call after the close returns at once, a call during
     * another thread's close waits for it. First refuses new calls ({@code "... is closing"}), then waits
     * for the calls in progress on other threads to return, then destroys.
     *
     * @throws IllegalStateException if children (objects created from this one, or posted work requests)
     *                               still use it; the object then stays open and usable; or if called from
     *                               within a call of this object that the close would wait for (e.g. a
     *                               context closed from its own async-event listener)
     */
    @Override
    public final void close() {
        refuseReentrantClose();
        AtomicInteger users = leak.users;
        int spins = 0;
        for (;;) { // announce the close: from here on acquire() refuses
            int n = users.get();
            if (n == CLOSED) {
                return;
            }
            if ((n & CLOSING) != 0) {
                spins = backOff(spins); // another thread is closing: wait for its outcome
                continue;
            }
            int kids = children.get();
            if (kids > 0) {
                throw stillUsed(kids);
            }
            if (users.compareAndSet(n, n | CLOSING)) {
                break;
            }
        }
        spins = 0;
        for (;;) { // only calls that began before the announcement remain, and they are short
            int n = users.get();
            if (n == CLOSING && users.compareAndSet(CLOSING, CLOSED)) {
                break;
            }
            int kids = children.get();
            if (kids > 0) { // a child was being created as the close began: give up the close, reopened
                users.getAndAdd(-CLOSING);
                throw stillUsed(kids);
            }
            spins = backOff(spins);
        }
        try {
            destroy();
        } finally {
            if (parent != null) {
                parent.release(true);
            }
        }
    }

    private IllegalStateException stillUsed(int kids) {
        return new IllegalStateException("cannot close " + description + ": still used by " + kids
                + " open object(s) or posted work request(s); close them (or let the work complete) first");
    }

    /** Spins briefly, then yields, then parks: a verb in progress takes microseconds, rarely more. */
    private static int backOff(int spins) {
        if (spins < 100) {
            Thread.onSpinWait();
        } else if (spins < 200) {
            Thread.yield();
        } else {
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
        return spins + 1;
    }

    /**
     * For a constructor whose verb failed: marks this closed without {@link #destroy()} and gives the
     * parent its child back.
     */
    final void abandon() {
        leak.users.set(CLOSED);
        if (parent != null) {
            parent.release(true);
        }
    }

    /**
     * Throws when the calling thread is itself inside a call of this object that {@link #close()} would wait
     * for (a listener closing the object that is delivering to it), which would never return. None by default.
     */
    void refuseReentrantClose() {
    }

    /** Frees the native object; called exactly once. */
    abstract void destroy();

    @Override
    public String toString() {
        return description + (isClosed() ? " (closed)" : "");
    }
}
