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
    private boolean answered;

    CmConnectionRequest(CmEventChannel channel, CmId id, byte[] privateData) {
        this.channel = channel;
        this.id = id;
        this.privateData = PrivateData.unframe(privateData);
        channel.unanswered(id, this);
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
        if (privateData.length > PrivateData.ACCEPT) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "rdma_cm private data is at most " + PrivateData.ACCEPT + " bytes on accept: " + privateData.length));
        }
        answer();
        return CmConnection.accepted(channel, id, setup, privateData, this.privateData);
    }

    /**
     * Rejects ({@code rdma_reject}); the peer's connect fails with {@link CmEventType#REJECTED} (IB CM
     * reason {@link CmException#REJECT_CONSUMER_DEFINED}) and this private data, framed as
     * {@link CmConnection} describes (an rdma4j peer sees exactly these bytes, up to 144).
     *
     * @param privateData the reason, possibly empty, at most 148 bytes
     * @throws VerbsException if the verb fails
     * @throws IllegalArgumentException if {@code privateData} is longer than 148 bytes (the CM would cut it); the
     *         request stays unanswered
     * @throws IllegalStateException if the request was already answered
     */
    public synchronized void reject(byte[] privateData) throws VerbsException {
        if (privateData.length > PrivateData.REJECT) {
            throw new IllegalArgumentException(
                    "rdma_cm private data is at most " + PrivateData.REJECT + " bytes on reject: " + privateData.length);
        }
        answer();
        try {
            id.run("rdma_reject", i -> RdmaCm.reject(i, PrivateData.frame(privateData, PrivateData.REJECT)));
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
