package dev.rdma4j.connect;

/**
 * An rdma_cm event ({@code struct rdma_cm_event}, copied before {@code rdma_ack_cm_event}) as a value,
 * for {@link CmConnection#addEventListener} and {@link CmListener#addEventListener}.
 *
 * @param type        the event type
 * @param status      its status (0, a negative errno, or a CM reject reason)
 * @param privateData the private data it carried, possibly empty
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
