package dev.rdma4j.connect;

import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A listening rdma_cm id ({@code rdma_create_id}, {@code rdma_bind_addr}, {@code rdma_listen}):
 * connection requests arrive as {@link CmConnectionRequest}s to accept or reject.
 */
public final class CmListener implements AutoCloseable {
    private final CmEventChannel channel;
    private final MemorySegment id;
    private final ArrayDeque<CmConnectionRequest> requests = new ArrayDeque<>();
    private final ArrayDeque<CompletableFuture<CmConnectionRequest>> waiting = new ArrayDeque<>();
    private boolean closed;
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<CmEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private CmListener(CmEventChannel channel, InetSocketAddress address, int backlog) throws VerbsException {
        this.channel = channel;
        this.id = RdmaCm.createId(channel.handle());
        try {
            channel.register(id, this::onEvent);
            RdmaCm.bindAddr(id, address);
            RdmaCm.listen(id, backlog);
        } catch (VerbsException | RuntimeException e) {
            channel.unregister(id);
            RdmaCm.destroyId(id);
            throw e;
        }
    }

    /**
     * Listens on an address ({@code rdma_bind_addr} + {@code rdma_listen}).
     *
     * @param channel the event channel
     * @param address the local address and port (e.g. the guest's 198.18.x address, port 7174)
     * @param backlog pending connection requests the kernel queues
     * @return the listener
     * @throws VerbsException if binding or listening fails (e.g. {@code EADDRINUSE})
     */
    public static CmListener listen(CmEventChannel channel, InetSocketAddress address, int backlog)
            throws VerbsException {
        return new CmListener(channel, address, backlog);
    }

    /**
     * The next connection request.
     *
     * @return completes on the engine thread when a peer connects
     */
    public synchronized CompletableFuture<CmConnectionRequest> nextRequest() {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("listener closed"));
        }
        CmConnectionRequest r = requests.poll();
        if (r != null) {
            return CompletableFuture.completedFuture(r);
        }
        CompletableFuture<CmConnectionRequest> f = new CompletableFuture<>();
        waiting.add(f);
        return f;
    }

    /**
     * Adds a listener for the listening id's rdma_cm events (CONNECT_REQUEST, DEVICE_REMOVAL, ...).
     *
     * @param listener called on the engine thread
     */
    public void addEventListener(java.util.function.Consumer<CmEvent> listener) {
        listeners.add(listener);
    }

    private void onEvent(RdmaCm.Event e) {
        CmEvent value = new CmEvent(CmEventType.of(e.type()), e.status(), e.privateData());
        listeners.forEach(l -> l.accept(value));
        if (CmEventType.of(e.type()) != CmEventType.CONNECT_REQUEST) {
            return;
        }
        CmConnectionRequest r = new CmConnectionRequest(channel, RdmaCm.idSegment(MemorySegment.ofAddress(e.id())),
                e.privateData());
        CompletableFuture<CmConnectionRequest> f;
        synchronized (this) {
            f = waiting.poll();
            if (f == null) {
                requests.add(r);
                return;
            }
        }
        f.complete(r);
    }

    /** Stops listening ({@code rdma_destroy_id}); pending {@link #nextRequest()} futures fail. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            waiting.forEach(f -> f.completeExceptionally(new IllegalStateException("listener closed")));
            waiting.clear();
            requests.forEach(CmConnectionRequest::rejectQuietly);
            requests.clear();
        }
        channel.unregister(id);
        try {
            RdmaCm.destroyId(id);
        } catch (VerbsException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
