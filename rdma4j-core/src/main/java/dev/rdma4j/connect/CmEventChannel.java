package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.RdmaUnavailableException;
import dev.rdma4j.VerbsException;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.internal.access.Access;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An rdma_cm event channel ({@code rdma_create_event_channel}) with a non-blocking fd that a
 * {@link CompletionEngine} watches: every event ({@code rdma_get_cm_event}, copied, then
 * {@code rdma_ack_cm_event}) is routed on the engine thread to the {@link CmListener} or
 * {@link CmConnection} it concerns. It also owns the rdma4j {@link Context}s of the devices
 * librdmacm opened for its connections.
 *
 * <p>Thread-safe. Events are read and handled on the engine thread; ids are created on the callers'
 * threads. The channel counts the rdma_cm ids on it (listeners, connections, unanswered connection
 * requests) and refuses to close under them: librdmacm's ids keep using their channel until destroyed.
 */
public final class CmEventChannel implements AutoCloseable {
    private static final int CLOSED = -1;
    /** Set while a close waits for the calls in progress: new calls are refused. */
    private static final int CLOSING = 1 << 30;

    /** Something that takes the events of one cm id. */
    interface Handler {
        /**
         * One event. For {@code CONNECT_REQUEST}, {@code requestId} is the new id librdmacm made for the
         * request; the handler owns it (answers it, or rejects it).
         */
        void onEvent(RdmaCm.Event event, CmId requestId);
    }

    /** Makes an id on the channel's handle. */
    interface IdFactory {
        CmId create(MemorySegment channel) throws NativeException;
    }

    private final CompletionEngine engine;
    private final MemorySegment handle;
    private final Map<Long, Handler> handlers = new ConcurrentHashMap<>();
    private final Map<Long, Context> contexts = new ConcurrentHashMap<>();
    /** Every id on the channel not yet destroyed. */
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    /** Connection requests handed out and not yet answered: the channel's close rejects them. */
    private final Map<Long, CmConnectionRequest> unanswered = new ConcurrentHashMap<>();
    /** {@code >= 0}: native calls in progress on the channel; {@code CLOSING} bit; {@code -1} closed. */
    private final AtomicInteger users = new AtomicInteger();

    private CmEventChannel(CompletionEngine engine) throws VerbsException {
        this.engine = engine;
        String unavailable = RdmaCm.failureMessage();
        if (unavailable != null) {
            throw new RdmaUnavailableException(unavailable, RdmaCm.failureCause());
        }
        try {
            this.handle = RdmaCm.createEventChannel();
        } catch (NativeException e) {
            throw CmId.verbs(e);
        }
        try {
            engine.watch(RdmaCm.channelFd(handle), this::processEvents);
        } catch (RuntimeException e) { // e.g. the engine is closed: the channel must not outlive the refusal
            RdmaCm.destroyEventChannel(handle);
            throw e;
        }
    }

    /**
     * Creates an event channel watched by {@code engine}.
     *
     * @param engine the engine whose thread handles the CM events
     * @return the channel
     * @throws VerbsException if {@code rdma_create_event_channel} fails
     * @throws dev.rdma4j.RdmaUnavailableException if librdmacm cannot be loaded
     */
    public static CmEventChannel create(CompletionEngine engine) throws VerbsException {
        return new CmEventChannel(engine);
    }

    /**
     * The engine watching this channel.
     *
     * @return the engine
     */
    public CompletionEngine engine() {
        return engine;
    }

    /**
     * Whether {@link #close()} has completed.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        return users.get() == CLOSED;
    }

    /** Creates an id ({@code rdma_create_id}) and counts it until it is destroyed. */
    CmId createId(IdFactory f) throws VerbsException {
        enter("rdma_create_id");
        try {
            CmId id = f.create(handle);
            ids.put(id.address(), id);
            return id;
        } catch (NativeException e) {
            throw CmId.verbs(e);
        } finally {
            users.decrementAndGet();
        }
    }

    /** The id was destroyed. */
    void forget(CmId id) {
        ids.remove(id.address());
        unanswered.remove(id.address());
    }

    void unanswered(CmId id, CmConnectionRequest r) {
        unanswered.put(id.address(), r);
    }

    void answered(CmId id) {
        unanswered.remove(id.address());
    }

    void register(CmId id, Handler h) {
        handlers.put(id.address(), h);
    }

    void unregister(CmId id) {
        handlers.remove(id.address());
    }

    private void enter(String verb) {
        for (;;) {
            int n = users.get();
            if (n == CLOSED || (n & CLOSING) != 0) {
                throw new IllegalStateException("CmEventChannel: " + verb + " after close(): the channel is "
                        + (n == CLOSED ? "closed" : "closing"));
            }
            if (users.compareAndSet(n, n + 1)) {
                return;
            }
        }
    }

    /** The rdma4j Context of the device librdmacm opened for {@code id}. */
    synchronized Context contextOf(CmId id) throws VerbsException { // one Context per device
        MemorySegment verbs = id.call("reading the rdma_cm id's device", RdmaCm::verbs);
        if (verbs.address() == 0) {
            throw new IllegalStateException(id.owner() + ": no device yet (the address is not resolved)");
        }
        Context c = contexts.get(verbs.address());
        if (c == null) {
            c = Access.get().borrowContext(verbs);
            contexts.put(verbs.address(), c);
        }
        return c;
    }

    /** Held while librdmacm reads an event (and may modify the QP of the event's id). */
    private final java.util.concurrent.locks.ReentrantLock eventLock = new java.util.concurrent.locks.ReentrantLock();

    java.util.concurrent.locks.ReentrantLock eventLock() {
        return eventLock;
    }

    private void processEvents() {
        for (;;) {
            RdmaCm.Event e;
            CmId requestId = null;
            int n = users.get();
            if (n == CLOSED || (n & CLOSING) != 0 || !users.compareAndSet(n, n + 1)) {
                if (n == CLOSED || (n & CLOSING) != 0) {
                    return; // closing: the fd leaves epoll when the channel is destroyed
                }
                continue;
            }
            eventLock.lock();
            try {
                e = RdmaCm.nextEvent(handle);
                if (e != null && CmEventType.of(e.type()) == CmEventType.CONNECT_REQUEST) {
                    // librdmacm made a new id for the request: counted before a close can look
                    requestId = CmId.adopt(this, MemorySegment.ofAddress(e.id()), "CmConnectionRequest");
                    ids.put(requestId.address(), requestId);
                }
            } catch (NativeException ex) {
                System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING, ex.getMessage());
                return;
            } finally {
                eventLock.unlock();
                users.decrementAndGet();
            }
            if (e == null) {
                return;
            }
            long target = requestId != null ? e.listenId() : e.id();
            Handler h = handlers.get(target);
            if (h != null) {
                try {
                    h.onEvent(e, requestId);
                    requestId = null; // the handler owns it
                } catch (RuntimeException | LinkageError | AssertionError failed) {
                    // the edge-triggered fd must be drained whatever one handler does
                    System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING,
                            () -> "rdma_cm event handler " + h + " threw on event " + e.type(), failed);
                }
            }
            if (requestId != null) { // no listener (closed meanwhile): the peer gets a reject, not silence
                rejectAndDestroy(requestId);
            }
        }
    }

    /** {@code rdma_reject} and {@code rdma_destroy_id} on a request nobody will answer. */
    static void rejectAndDestroy(CmId id) {
        try {
            id.run("rdma_reject", i -> RdmaCm.reject(i, PrivateData.frame(new byte[0], PrivateData.REJECT)));
        } catch (VerbsException | IllegalStateException ignored) {
            // the peer may be gone already; the id is destroyed either way
        } finally {
            try {
                id.close(null);
            } catch (IllegalStateException ignored) {
                // rdma_destroy_id failed: nothing more to do for an id nobody holds
            }
        }
    }

    /**
     * Destroys the channel ({@code rdma_destroy_event_channel}); the device contexts it owns close as
     * soon as the PDs, CQs and channels created on them are closed. Connection requests handed out and
     * never answered are rejected ({@code rdma_reject}, {@code rdma_destroy_id}). Idempotent; a close
     * racing another thread's waits for its outcome.
     *
     * @throws IllegalStateException if listeners or connections on the channel are still open: close them
     *                               first; the channel then stays open and usable
     */
    @Override
    public void close() {
        int spins = 0;
        for (;;) { // announce the close: from here on new ids and event reads are refused
            int n = users.get();
            if (n == CLOSED) {
                return;
            }
            if ((n & CLOSING) != 0) {
                spins = dev.rdma4j.internal.BackOff.step(spins);
                continue;
            }
            refuseIfUsed();
            if (users.compareAndSet(n, n | CLOSING)) {
                break;
            }
        }
        spins = 0;
        while (users.get() != CLOSING) { // an rdma_create_id or an event read still returning
            spins = dev.rdma4j.internal.BackOff.step(spins);
        }
        try {
            refuseIfUsed(); // an id created as the close began
            unanswered.values().forEach(CmConnectionRequest::rejectQuietly);
            if (!ids.isEmpty()) { // a request answered (accepted) meanwhile
                refuseIfUsed();
            }
        } catch (IllegalStateException e) {
            users.getAndAdd(-CLOSING);
            throw e;
        }
        users.set(CLOSED);
        try {
            contexts.values().forEach(Context::closeWhenIdle);
        } finally {
            RdmaCm.destroyEventChannel(handle);
        }
    }

    private void refuseIfUsed() {
        long used = ids.keySet().stream().filter(a -> !unanswered.containsKey(a)).count();
        if (used > 0) {
            throw new IllegalStateException("cannot close CmEventChannel: still used by " + used
                    + " rdma_cm id(s) (" + String.join(", ", ids.values().stream()
                            .filter(i -> !unanswered.containsKey(i.address())).map(CmId::owner).sorted().toList())
                    + "); close its listeners and connections first");
        }
    }

}
