package dev.rdma4j.connect;

import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One rdma_cm id ({@code struct rdma_cm_id *}) and the native calls in progress on it, so that
 * {@code rdma_destroy_id} never runs under one: every call on the id goes through {@link #call}, which
 * counts it; {@link #close} refuses new calls, waits for those in progress (they are short: no call made
 * under the count waits for the engine thread), then destroys the id. A call after the close is an
 * {@link IllegalStateException} naming the owner and the verb, never a use of freed memory.
 *
 * <p>The same mechanics as {@code dev.rdma4j.NativeResource}, whose members that package keeps to itself.
 * Thread-safe; calls come from callers' threads and the engine thread.
 */
final class CmId {
    private static final int CLOSED = -1;
    /** Set while a close waits for the calls in progress: {@link #call} refuses. */
    private static final int CLOSING = 1 << 30;

    /** A native call on the id. */
    @FunctionalInterface
    interface Call<T> {
        T run(MemorySegment id) throws NativeException, VerbsException;
    }

    /** A native call on the id that returns nothing. */
    @FunctionalInterface
    interface VoidCall {
        void run(MemorySegment id) throws NativeException, VerbsException;
    }

    private final CmEventChannel channel;
    private final MemorySegment id;
    private final AtomicInteger users = new AtomicInteger();
    /**
     * Serialises the native calls on the id: librdmacm's calls on one id are not thread-safe against each
     * other (rdma_disconnect moves the id's QP to ERROR, rdma_destroy_qp frees it).
     */
    private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    private volatile String owner;

    private CmId(CmEventChannel channel, MemorySegment id, String owner) {
        this.channel = channel;
        this.id = id;
        this.owner = owner;
    }

    /** {@code rdma_create_id} on the channel, counted by it until {@link #close}. */
    static CmId create(CmEventChannel channel, String owner) throws VerbsException {
        return create(channel, owner, CmPortSpace.TCP);
    }

    /** {@code rdma_create_id} in a port space, counted by the channel until {@link #close}. */
    static CmId create(CmEventChannel channel, String owner, CmPortSpace space) throws VerbsException {
        return channel.createId(ch -> new CmId(channel, RdmaCm.createId(ch, space.code()), owner));
    }

    /** An id librdmacm created (a connection request's), counted by the channel until {@link #close}. */
    static CmId adopt(CmEventChannel channel, MemorySegment id, String owner) {
        return new CmId(channel, RdmaCm.idSegment(id), owner);
    }

    long address() {
        return id.address();
    }

    CmEventChannel channel() {
        return channel;
    }

    /** The owner's name, for messages: e.g. {@code "CmConnection(connect to /198.18.0.2:7174)"}. */
    String owner() {
        return owner;
    }

    void owner(String name) {
        owner = name;
    }

    /**
     * Runs one native call on the id, counted.
     *
     * @throws IllegalStateException if the id is destroyed or being destroyed
     */
    <T> T call(String verb, Call<T> c) throws VerbsException {
        enter(verb);
        lock.lock();
        try {
            return c.run(id);
        } catch (NativeException e) {
            throw verbs(e);
        } finally {
            lock.unlock();
            users.decrementAndGet();
        }
    }

    /** {@link #call} for a call without a result. */
    void run(String verb, VoidCall c) throws VerbsException {
        enter(verb);
        lock.lock();
        try {
            c.run(id);
        } catch (NativeException e) {
            throw verbs(e);
        } finally {
            lock.unlock();
            users.decrementAndGet();
        }
    }

    /** The API's exception for a failure librdmacm's binding reported. */
    static VerbsException verbs(NativeException e) {
        return new VerbsException(e.verb(), e.errno(), e.errnoText(), e.detail());
    }

    /**
     * A call the close itself may need while it runs ({@code rdma_destroy_qp} from the queue pair's close):
     * refused only once the id is destroyed. It also excludes the channel's event reading, during which
     * librdmacm may move the id's QP ({@code rdma_get_cm_event} handles a connect response by modifying it),
     * so the QP is never freed under either; whether the QP is closed through its connection or directly.
     */
    void runWhileClosing(String verb, VoidCall c) throws VerbsException {
        for (;;) {
            int n = users.get();
            if (n == CLOSED) {
                throw closed(verb);
            }
            if (users.compareAndSet(n, n + 1)) {
                break;
            }
        }
        java.util.concurrent.locks.ReentrantLock events = channel.eventLock();
        events.lock(); // channel before id: the only order in which both are taken
        lock.lock();
        try {
            c.run(id);
        } catch (NativeException e) {
            throw verbs(e);
        } finally {
            lock.unlock();
            events.unlock();
            users.decrementAndGet();
        }
    }

    private void enter(String verb) {
        for (;;) {
            int n = users.get();
            if (n == CLOSED) {
                throw closed(verb);
            }
            if ((n & CLOSING) != 0) {
                throw new IllegalStateException(owner + ": " + verb + " during close(): its rdma_cm id is being"
                        + " destroyed");
            }
            if (users.compareAndSet(n, n + 1)) {
                return;
            }
        }
    }

    private IllegalStateException closed(String verb) {
        return new IllegalStateException(owner + ": " + verb + " after close(): its rdma_cm id is destroyed");
    }

    boolean isClosed() {
        return users.get() == CLOSED;
    }

    /** Throws as a call would, for methods that only read Java state. */
    void ensureOpen(String what) {
        int n = users.get();
        if (n == CLOSED) {
            throw closed(what);
        }
        if ((n & CLOSING) != 0) {
            throw new IllegalStateException(owner + ": " + what + " during close(): its rdma_cm id is being"
                    + " destroyed");
        }
    }

    /**
     * Destroys the id ({@code rdma_destroy_id}) once the calls in progress returned, after
     * {@code beforeDestroy} (e.g. closing the queue pair on it). Idempotent: returns {@code false} if
     * already closed; a close racing another thread's waits for its outcome.
     *
     * @throws IllegalStateException if {@code beforeDestroy} threw it: the id then stays open and usable
     */
    boolean close(Runnable beforeDestroy) {
        int spins = 0;
        for (;;) {
            int n = users.get();
            if (n == CLOSED) {
                return false;
            }
            if ((n & CLOSING) != 0) {
                spins = dev.rdma4j.internal.BackOff.step(spins); // another thread is closing: wait for its outcome
                continue;
            }
            if (users.compareAndSet(n, n | CLOSING)) {
                break;
            }
        }
        spins = 0;
        while (users.get() != CLOSING) { // only calls that began before the announcement remain
            spins = dev.rdma4j.internal.BackOff.step(spins);
        }
        if (beforeDestroy != null) {
            try {
                beforeDestroy.run();
            } catch (RuntimeException | Error e) {
                users.getAndAdd(-CLOSING); // reopened: the caller may fix what refused and close again
                throw e;
            }
        }
        spins = 0;
        while (!users.compareAndSet(CLOSING, CLOSED)) { // a runWhileClosing call still returning
            spins = dev.rdma4j.internal.BackOff.step(spins);
        }
        channel.unregister(this);
        try {
            RdmaCm.destroyId(id);
        } catch (NativeException e) {
            throw new IllegalStateException(owner + ": " + e.getMessage(), verbs(e));
        } finally {
            channel.forget(this);
        }
        return true;
    }


    @Override
    public String toString() {
        return "rdma_cm id of " + owner + (isClosed() ? " (destroyed)" : "");
    }
}
