package dev.rdma4j.engine;

import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import java.io.IOException;

/**
 * A work request completed with an error status, or never will (its queue pair or engine was closed,
 * which rdma4j reports as {@link WcStatus#WR_FLUSH_ERR}). Futures of the async API complete
 * exceptionally with it; the blocking view ({@link BlockingQueuePair}) throws it.
 *
 * <p>Threading: immutable, thread-safe.
 */
public final class WorkRequestException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The typed status. */
    private final WcStatus status;
    /** The completion, or null when the request was abandoned without one. */
    private final transient WorkCompletion completion;

    /**
     * For a failed completion.
     *
     * @param what       the operation, e.g. "RDMA read"
     * @param completion the completion
     */
    public WorkRequestException(String what, WorkCompletion completion) {
        super(what + " failed: " + completion.status() + " (" + completion.status().text() + ")"
                + (completion.vendorError() != 0 ? ", vendor error 0x" + Integer.toHexString(completion.vendorError())
                : ""));
        this.status = completion.status();
        this.completion = completion;
    }

    /**
     * For a request abandoned without a completion.
     *
     * @param what   the operation
     * @param reason why, e.g. "queue pair closed"
     */
    public WorkRequestException(String what, String reason) {
        super(what + " flushed: " + reason);
        this.status = WcStatus.WR_FLUSH_ERR;
        this.completion = null;
    }

    /**
     * The typed status ({@code WR_FLUSH_ERR} for abandoned requests).
     *
     * @return the status
     */
    public WcStatus status() {
        return status;
    }

    /**
     * The failed completion.
     *
     * @return it, or null when the request was abandoned without one
     */
    public WorkCompletion completion() {
        return completion;
    }
}
