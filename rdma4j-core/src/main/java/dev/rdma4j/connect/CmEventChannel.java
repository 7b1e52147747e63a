package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.internal.Access;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An rdma_cm event channel ({@code rdma_create_event_channel}) with a non-blocking fd that a
 * {@link CompletionEngine} watches: every event ({@code rdma_get_cm_event}, copied, then
 * {@code rdma_ack_cm_event}) is routed on the engine thread to the {@link CmListener} or
 * {@link CmConnection} it concerns. It also owns the rdma4j {@link Context}s of the devices
 * librdmacm opened for its connections.
 */
public final class CmEventChannel implements AutoCloseable {
    /** Something that takes the events of one cm id. */
    interface Handler {
        void onEvent(RdmaCm.Event event);
    }

    private final CompletionEngine engine;
    private final MemorySegment handle;
    private final Map<Long, Handler> handlers = new ConcurrentHashMap<>();
    private final Map<Long, Context> contexts = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private CmEventChannel(CompletionEngine engine) throws VerbsException {
        this.engine = engine;
        this.handle = RdmaCm.createEventChannel();
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

    MemorySegment handle() {
        return handle;
    }

    void register(MemorySegment id, Handler h) {
        handlers.put(id.address(), h);
    }

    void unregister(MemorySegment id) {
        handlers.remove(id.address());
    }

    /** The rdma4j Context of the device librdmacm opened for {@code id}. */
    synchronized Context contextOf(MemorySegment id) throws VerbsException { // one Context per device
        MemorySegment verbs = RdmaCm.verbs(id);
        Context c = contexts.get(verbs.address());
        if (c == null) {
            c = Access.get().borrowContext(verbs);
            contexts.put(verbs.address(), c);
        }
        return c;
    }

    private void processEvents() {
        if (closed.get()) {
            throw new IllegalStateException("channel closed");
        }
        for (;;) {
            RdmaCm.Event e;
            try {
                e = RdmaCm.nextEvent(handle);
            } catch (VerbsException ex) {
                System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING, ex.getMessage());
                return;
            }
            if (e == null) {
                return;
            }
            long target = CmEventType.of(e.type()) == CmEventType.CONNECT_REQUEST ? e.listenId() : e.id();
            Handler h = handlers.get(target);
            if (h != null) {
                try {
                    h.onEvent(e);
                } catch (RuntimeException | LinkageError | AssertionError failed) {
                    // the edge-triggered fd must be drained whatever one handler does
                    System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING,
                            () -> "rdma_cm event handler " + h + " threw on event " + e.type(), failed);
                }
            }
        }
    }

    /**
     * Destroys the channel ({@code rdma_destroy_event_channel}); the device contexts it owns close as
     * soon as the PDs, CQs and channels created on them are closed. Close listeners and connections first.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            contexts.values().forEach(Context::closeWhenIdle);
        } finally {
            RdmaCm.destroyEventChannel(handle);
        }
    }
}
