package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.util.concurrent.CompletableFuture;

/**
 * A peer's connection request ({@code RDMA_CM_EVENT_CONNECT_REQUEST}): accept it or reject it, once.
 * librdmacm made a new rdma_cm id for it; a request never answered is rejected when its listener
 * or, once handed out, its event channel closes.
 *
 * <p>Thread-safe: answering is synchronized, and a second answer is refused. Created on the engine
 * thread; {@link #acceptAsync} and {@link #reject} run on the caller's thread.
 */
public final class CmConnectionRequest {
    private final CmEventChannel channel;
    private final CmId id;
    private final byte[] privateData;
    private final CmPortSpace space;
    private boolean answered;

    CmConnectionRequest(CmEventChannel channel, CmId id, byte[] privateData, CmPortSpace space) {
        this.channel = channel;
        this.id = id;
        this.space = space;
        this.privateData = space == CmPortSpace.TCP ? PrivateData.unframe(privateData) : privateData;
        channel.unanswered(id, this);
    }

    /**
     * The port space of the listener the request came to: {@link CmPortSpace#UDP} for a UD peer's resolution request
     * (SIDR), answered with {@link #acceptDatagramAsync}.
     *
     * @return the port space
     */
    public CmPortSpace portSpace() {
        return space;
    }

    /**
     * The private data the peer sent with {@code rdma_connect}: from an rdma4j peer exactly the bytes it
     * passed (up to 52 keep their length; see {@link CmConnection}'s class comment), from another peer
     * what the CM delivered (on InfiniBand/RoCE zero-padded to 56 bytes).
     *
     * @return a copy, possibly empty
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * The device the request came in on, before accepting: e.g. to allocate the protection domain of the
     * connection and register a region whose address and rkey travel in accept's private data
     * ({@code rdma_cm_id}'s {@code verbs}).
     *
     * @return the context (owned by the event channel; close what you create on it before the channel)
     * @throws VerbsException        if wrapping the device context fails
     * @throws IllegalStateException if the request was rejected
     */
    public Context context() throws VerbsException {
        return channel.contextOf(id);
    }

    /**
     * Accepts: creates the queue pair ({@code rdma_create_qp}) as {@code setup} describes, runs its
     * {@link ConnectionSetup#beforeConnect} and calls {@code rdma_accept} with {@code privateData}.
     *
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's ESTABLISHED event, possibly empty, at most 196 bytes (up to 192
     *                    keep their length at an rdma4j peer: see {@link CmConnection}'s class comment)
     * @return completes with the connection when it is ESTABLISHED (QP in RTS); or exceptionally with an
     *         {@link IllegalArgumentException} if {@code privateData} is longer than 196 bytes, as
     *         {@link CmConnection#connectAsync} does for its 56: the CM would cut it, so nothing is sent and the request
     *         stays unanswered
     * @throws IllegalStateException if the request was already answered
     */
    public synchronized CompletableFuture<CmConnection> acceptAsync(ConnectionSetup setup, byte[] privateData) {
        if (space != CmPortSpace.TCP) {
            throw new IllegalStateException("a request of the " + space + " port space is a UD peer's: answer it"
                    + " with acceptDatagramAsync");
        }
        if (privateData.length > PrivateData.ACCEPT) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "rdma_cm private data is at most " + PrivateData.ACCEPT + " bytes on accept: " + privateData.length));
        }
        answer();
        return CmConnection.accepted(channel, id, setup, privateData, this.privateData);
    }

    /**
     * Accepts a UD peer's resolution request ({@link CmPortSpace#UDP}): creates the UD queue pair
     * ({@code rdma_create_qp}, which moves it to RTS) as {@code setup} describes, runs its
     * {@link ConnectionSetup#beforeConnect} (post the receives for the peer's datagrams there) and calls
     * {@code rdma_accept}, which answers with the queue pair's number and Q_Key. The peer is known by its first
     * datagram (its source queue pair and GRH: {@code ProtectionDomain.createAddressHandle(WorkCompletion, ...)}).
     *
     * @param setup       the queue pair's PD, CQs and capacities: a builder of type UD
     * @param privateData for the peer, possibly empty, at most {@link CmDatagram#ACCEPT_PRIVATE_DATA} bytes, sent as
     *                    given
     * @return completes with the datagram once accepted, or exceptionally with the {@link VerbsException} of a verb
     *         or an {@link IllegalArgumentException} (private data too long: the request stays unanswered; a setup
     *         not UD)
     * @throws IllegalStateException if the request was already answered, or is not of the UDP port space
     */
    public synchronized CompletableFuture<CmDatagram> acceptDatagramAsync(ConnectionSetup setup, byte[] privateData) {
        if (space != CmPortSpace.UDP) {
            throw new IllegalStateException("a request of the " + space + " port space is answered with acceptAsync");
        }
        if (privateData.length > CmDatagram.ACCEPT_PRIVATE_DATA) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("rdma_cm private data is at most "
                    + CmDatagram.ACCEPT_PRIVATE_DATA + " bytes on a UD accept: " + privateData.length));
        }
        answer();
        return CmDatagram.accepted(channel, id, setup, privateData.clone(), this.privateData);
    }

    /**
     * Rejects ({@code rdma_reject}); the peer's connect fails with {@link CmEventType#REJECTED} (IB CM
     * reason {@link CmException#REJECT_CONSUMER_DEFINED}) and this private data, framed as
     * {@link CmConnection} describes (an rdma4j peer sees exactly these bytes, up to 144).
     *
     * @param privateData the reason, possibly empty, at most 148 bytes (136 for a UD peer's request, sent as given)
     * @throws VerbsException if the verb fails
     * @throws IllegalArgumentException if {@code privateData} is longer than 148 bytes (the CM would cut it); the
     *         request stays unanswered
     * @throws IllegalStateException if the request was already answered
     */
    public synchronized void reject(byte[] privateData) throws VerbsException {
        int most = space == CmPortSpace.TCP ? PrivateData.REJECT : CmDatagram.ACCEPT_PRIVATE_DATA;
        if (privateData.length > most) {
            throw new IllegalArgumentException(
                    "rdma_cm private data is at most " + most + " bytes on reject: " + privateData.length);
        }
        answer();
        // a UD peer's reject is a SIDR reply (136 bytes): sent as given, without rdma4j's trailer
        byte[] data = space == CmPortSpace.TCP ? PrivateData.frame(privateData, PrivateData.REJECT) : privateData.clone();
        try {
            id.run("rdma_reject", i -> RdmaCm.reject(i, data));
        } finally {
            id.close(null);
        }
    }

    void rejectQuietly() {
        try {
            reject(new byte[0]);
        } catch (VerbsException | IllegalStateException ignored) {
            // closing the listener: nothing to report to
        }
    }

    private void answer() {
        if (answered) {
            throw new IllegalStateException("this connection request was already answered"
                    + (id.isClosed() ? " (rejected: by the caller, or as its listener or channel closed)" : ""));
        }
        answered = true;
        channel.answered(id);
    }
}
