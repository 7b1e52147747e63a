package dev.rdma4j.connect;

/**
 * An rdma_cm event ({@code struct rdma_cm_event}, copied before {@code rdma_ack_cm_event}) as a value,
 * for {@link CmConnection#addEventListener} and {@link CmListener#addEventListener}. Immutable.
 *
 * <p>Its private data is the CM's, as delivered: on InfiniBand/RoCE padded to the field's size and, from an
 * rdma4j peer, ending with rdma4j's length trailer (see {@link CmConnection}); the connection's own
 * accessors ({@link CmConnection#peerPrivateData()}, {@link CmConnectionRequest#privateData()}) strip it.
 *
 * @param type        the event type
 * @param status      its status (0, a negative errno, or a CM reject reason)
 * @param privateData the private data it carried, as delivered, possibly empty
 */
public record CmEvent(CmEventType type, int status, byte[] privateData) {
    /**
     * Copies the private data.
     *
     * @param type        the event type
     * @param status      its status
     * @param privateData its private data
     */
    public CmEvent {
        privateData = privateData.clone();
    }

    /**
     * The private data.
     *
     * @return a copy
     */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }
}
