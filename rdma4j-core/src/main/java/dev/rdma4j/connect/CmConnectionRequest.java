package dev.rdma4j.connect;

import dev.rdma4j.VerbsException;
import dev.rdma4j.internal.ffi.RdmaCm;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/** A peer's connection request ({@code RDMA_CM_EVENT_CONNECT_REQUEST}): accept it or reject it, once. */
public final class CmConnectionRequest {
    private final CmEventChannel channel;
    private final MemorySegment id;
    private final byte[] privateData;
    private boolean answered;

    CmConnectionRequest(CmEventChannel channel, MemorySegment id, byte[] privateData) {
        this.channel = channel;
        this.id = id;
        this.privateData = privateData;
    }

    /**
     * The private data the peer sent with {@code rdma_connect}.
     *
     * @return a copy (IB CM carries at most 56 bytes; shorter data is zero-padded by the transport)
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * Accepts: creates the queue pair ({@code rdma_create_qp}) as {@code setup} describes and calls
     * {@code rdma_accept} with {@code privateData}.
     *
     * @param setup       the queue pair's PD/CQs/capacities
     * @param privateData for the peer's ESTABLISHED event, possibly empty
     * @return completes with the connection when it is ESTABLISHED (QP in RTS)
     */
    public synchronized CompletableFuture<CmConnection> accept(ConnectionSetup setup, byte[] privateData) {
        answer();
        return CmConnection.accepted(channel, id, setup, privateData, this.privateData);
    }

    /**
     * Rejects ({@code rdma_reject}); the peer's connect fails with {@link CmEventType#REJECTED} and
     * this private data.
     *
     * @param privateData the reason, possibly empty
     * @throws VerbsException if the verb fails
     */
    public synchronized void reject(byte[] privateData) throws VerbsException {
        answer();
        try {
            RdmaCm.reject(id, privateData);
        } finally {
            RdmaCm.destroyId(id);
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
            throw new IllegalStateException("this connection request was already answered");
        }
        answered = true;
    }
}
