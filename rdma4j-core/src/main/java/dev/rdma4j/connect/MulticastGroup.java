package dev.rdma4j.connect;

import dev.rdma4j.UdDestination;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A multicast group a {@link CmDatagram} joined ({@code rdma_join_multicast_ex}): its {@link #destination()} (the
 * address handle made from the MULTICAST_JOIN event's {@code ah_attr}, queue pair number
 * {@link UdDestination#MULTICAST_QPN}, the group's Q_Key) sends to every member; a full member's queue pair receives
 * the group's datagrams. {@link #close()} leaves the group ({@code rdma_leave_multicast}); so do the close of the
 * datagram and of its queue pair.
 *
 * <p>Thread-safe. The join completes on the engine thread; {@link #close()} runs on the caller's. Every native call
 * goes through the datagram's counted, serialized rdma_cm id.
 */
public final class MulticastGroup implements AutoCloseable {
    private final CmDatagram datagram;
    private final InetSocketAddress address;
    private final boolean sendOnly;
    private final CompletableFuture<MulticastGroup> joined = new CompletableFuture<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile UdDestination destination;
    private volatile CmException error;
    /**
     * Left: by {@link #close()}, or with the queue pair's or the datagram's close. Written under the id's lock
     * (or once the id is destroyed), so that exactly one {@code rdma_leave_multicast} runs.
     */
    volatile boolean left;

    MulticastGroup(CmDatagram datagram, InetSocketAddress address, boolean sendOnly) {
        this.datagram = datagram;
        this.address = address;
        this.sendOnly = sendOnly;
    }

    InetSocketAddress socketAddress() {
        return address;
    }

    CompletableFuture<MulticastGroup> joined() {
        return joined;
    }

    /**
     * MULTICAST_JOIN (the queue pair attached by librdmacm) or MULTICAST_ERROR, on the engine thread. The handle is
     * made as a counted call on the datagram's id, so that a close on another thread either waits for it and then
     * closes it, or refuses it ({@link IllegalStateException}); the future completes after the call, outside it.
     */
    void onEvent(CmEventType type, RdmaCm.Event e) {
        if (type == CmEventType.MULTICAST_JOIN && e.status() == 0) {
            if (joined.isDone()) { // failed already: the datagram or its queue pair closed before this was handled
                return;
            }
            try {
                datagram.whileOpen("ibv_create_ah (the multicast group's handle)", i -> {
                    if (left) { // the queue pair closed after librdmacm read the event: no handle for a group left
                        throw new IllegalStateException(this + " was left before its join completed");
                    }
                    destination = new UdDestination(datagram.createAddressHandle(e.ahAttr()), e.qpNum(), e.qkey());
                });
                joined.complete(this);
            } catch (VerbsException | RuntimeException ex) {
                joined.completeExceptionally(ex);
            }
            return;
        }
        CmException failure = new CmException("join multicast group " + address.getAddress().getHostAddress()
                + " on " + datagram.what(), type, e.status(), new byte[0]);
        if (!joined.completeExceptionally(failure)) {
            error = failure; // after the join: e.g. the port went down
            System.getLogger("dev.rdma4j.connect").log(System.Logger.Level.WARNING, failure.getMessage());
        }
    }

    /**
     * The group's address.
     *
     * @return the multicast address joined
     */
    public InetAddress address() {
        return address.getAddress();
    }

    /**
     * Whether it was joined as a send-only full member ({@code RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER}).
     *
     * @return {@code true} if this side does not receive the group's datagrams
     */
    public boolean isSendOnly() {
        return sendOnly;
    }

    /**
     * Where sends to the group go: the address handle (owned by the group), queue pair number
     * {@link UdDestination#MULTICAST_QPN} and the group's Q_Key (from the MULTICAST_JOIN event).
     *
     * @return the destination
     * @throws IllegalStateException if the group was left
     */
    public UdDestination destination() {
        if (closed.get()) {
            throw new IllegalStateException("multicast group " + address.getAddress().getHostAddress() + " was left");
        }
        return destination;
    }

    /**
     * A MULTICAST_ERROR rdma_cm reported after the join (e.g. the port went down), or null.
     *
     * @return the failure, or null
     */
    public CmException error() {
        return error;
    }

    /** The datagram was closed before the join's MULTICAST_JOIN was handled: the join fails. */
    void closedBeforeJoined() {
        joined.completeExceptionally(new IllegalStateException(datagram + ": closed before the join of multicast group "
                + address.getAddress().getHostAddress() + " completed"));
    }

    /** The queue pair closed before the join's MULTICAST_JOIN was handled, and left the group: the join fails. */
    void leftBeforeJoined() {
        joined.completeExceptionally(new IllegalStateException(datagram + ": its queue pair closed before the join of"
                + " multicast group " + address.getAddress().getHostAddress() + " completed"));
    }

    /** Closes the address handle (the datagram's close). */
    void closeHandle() {
        UdDestination d = destination;
        if (d != null) {
            d.addressHandle().close();
        }
    }

    /**
     * Leaves the group ({@code rdma_leave_multicast}, which detaches the queue pair) after closing its address
     * handle. Idempotent; after the close of the datagram or of its queue pair, which left the group already, it
     * only closes the handle.
     *
     * @throws VerbsException        if the verb fails
     * @throws IllegalStateException if sends still posted use the address handle (nothing is left then: close again
     *                               once they completed), or the datagram is being closed at the same time (its
     *                               close leaves the group)
     */
    @Override
    public void close() throws VerbsException {
        if (closed.get()) {
            return;
        }
        closeHandle();
        if (closed.compareAndSet(false, true)) {
            datagram.leave(this);
        }
    }

    @Override
    public String toString() {
        return "MulticastGroup(" + address.getAddress().getHostAddress() + (sendOnly ? ", send-only" : "") + ")";
    }
}
