package dev.rdma4j.connect;

import java.io.IOException;

/**
 * A connection could not be set up: the rdma_cm event that ended it (address/route error, unreachable,
 * rejected, connect error), its status, and the private data a rejecting peer sent.
 */
public final class CmException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The event that ended the attempt. */
    private final CmEventType event;
    /** The event's status (a negative errno, or the IB CM reject reason). */
    private final int status;
    /** Private data carried by the event (a reject's reason), possibly empty. */
    private final byte[] privateData;

    /**
     * Creates the exception.
     *
     * @param what        what was being done, e.g. "connect to 198.18.0.1:7174"
     * @param event       the event
     * @param status      its status
     * @param privateData its private data
     */
    public CmException(String what, CmEventType event, int status, byte[] privateData) {
        super(what + " failed: " + event + " (status " + status + ")"
                + (privateData.length > 0 ? ", " + privateData.length + " bytes of private data" : ""));
        this.event = event;
        this.status = status;
        this.privateData = privateData.clone();
    }

    /**
     * The event that ended the attempt.
     *
     * @return e.g. {@link CmEventType#REJECTED}
     */
    public CmEventType event() {
        return event;
    }

    /**
     * The event's status.
     *
     * @return a negative errno, or the CM reject reason for {@code REJECTED}
     */
    public int status() {
        return status;
    }

    /**
     * The private data of a reject.
     *
     * @return a copy, possibly empty
     */
    public byte[] privateData() {
        return privateData.clone();
    }
}
