package dev.rdma4j.connect;

import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A listening rdma_cm id ({@code rdma_create_id}, {@code rdma_bind_addr}, {@code rdma_listen}):
 * connection requests arrive as {@link CmConnectionRequest}s to accept or reject.
 *
 * <p>Thread-safe. Connection requests arrive on the engine thread; {@link #close()} may run on any
 * thread, and a request arriving as it closes is rejected rather than left unanswered.
 */
public final class CmListener implements AutoCloseable {
    private final CmEventChannel channel;
    private final CmId id;
    private final ArrayDeque<CmConnectionRequest> requests = new ArrayDeque<>();
    private final ArrayDeque<CompletableFuture<CmConnectionRequest>> waiting = new ArrayDeque<>();
    private boolean closed;
    /** The address listened on, with the port rdma_cm chose when asked for port 0. */
    private final InetSocketAddress localAddress;
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<CmEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private final CmPortSpace space;

    private CmListener(CmEventChannel channel, InetSocketAddress address, int backlog, CmPortSpace space)
            throws VerbsException {
        this.channel = channel;
        this.space = space;
        this.id = CmId.create(channel, "CmListener(" + address + (space == CmPortSpace.TCP ? "" : ", " + space) + ")",
                space);
        try {
            channel.register(id, this::onEvent);
            id.run("rdma_bind_addr", i -> RdmaCm.bindAddr(i, address));
            id.run("rdma_listen", i -> RdmaCm.listen(i, backlog));
            int port = id.call("rdma_get_src_port", RdmaCm::srcPort);
            this.localAddress = new InetSocketAddress(address.getAddress(), port);
        } catch (VerbsException | RuntimeException e) {
            try {
                id.close(null);
            } catch (IllegalStateException suppressed) {
                e.addSuppressed(suppressed);
            }
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
        return new CmListener(channel, address, backlog, CmPortSpace.TCP);
    }

    /**
     * Listens in a port space: {@link CmPortSpace#UDP} for UD peers that resolve this address with
     * {@link CmDatagram#connectAsync} or rdma-core's {@code udaddy} (their requests are answered with
     * {@link CmConnectionRequest#acceptDatagramAsync}).
     *
     * @param channel the event channel
     * @param address the local address and port
     * @param backlog pending requests the kernel queues
     * @param space   the port space
     * @return the listener
     * @throws VerbsException if binding or listening fails (e.g. {@code EADDRINUSE})
     */
    public static CmListener listen(CmEventChannel channel, InetSocketAddress address, int backlog,
            CmPortSpace space) throws VerbsException {
        return new CmListener(channel, address, backlog, java.util.Objects.requireNonNull(space, "space"));
    }

    /**
     * The port space listened in.
     *
     * @return {@link CmPortSpace#TCP} unless listening for datagrams
     */
    public CmPortSpace portSpace() {
        return space;
    }

    /**
     * The address it listens on, with the port rdma_cm chose when {@link #listen} was given port 0
     * ({@code rdma_get_src_port}).
     *
     * @return the address
     */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * The next connection request.
     *
     * @return completes on the engine thread when a peer connects; cancelling it (e.g. after a timeout) gives
     *         up the wait, and the request it would have had goes to the next caller
     */
    public synchronized CompletableFuture<CmConnectionRequest> nextRequestAsync() {
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

    private void onEvent(RdmaCm.Event e, CmId requestId) {
        if (requestId != null) {
            CmConnectionRequest r = new CmConnectionRequest(channel, requestId, e.privateData(), space);
            for (;;) {
                CompletableFuture<CmConnectionRequest> f;
                synchronized (this) {
                    if (closed) { // raced close(): answer the peer now rather than never
                        r.rejectQuietly();
                        break;
                    }
                    f = waiting.poll();
                    if (f == null) {
                        requests.add(r);
                        break;
                    }
                }
                if (f.complete(r)) {
                    break;
                }
                // the caller cancelled that future (e.g. its accept timed out): the next one, or the queue,
                // takes the request, which would otherwise stay unanswered until the channel closes
            }
        }
        CmEvent value = new CmEvent(CmEventType.of(e.type()), e.status(), e.privateData());
        listeners.forEach(l -> l.accept(value));
    }

    /**
     * Stops listening ({@code rdma_destroy_id}); pending {@link #nextRequestAsync()} futures fail, and requests
     * not yet taken are rejected ({@code rdma_reject}). Idempotent.
     */
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
        id.close(null);
    }
}
