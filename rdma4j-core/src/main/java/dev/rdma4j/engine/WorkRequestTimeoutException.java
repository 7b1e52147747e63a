package dev.rdma4j.engine;

import java.io.IOException;
import java.time.Duration;

/**
 * A blocking {@link AsyncQueuePair} call gave up at its deadline (like the JDK's {@code HttpTimeoutException}).
 * Giving up changes nothing on the device: a request already posted stays posted, its regions stay pinned
 * (their {@code close()} is refused) and its queue room stays taken until the device completes it or the
 * queue pair is closed or reset, which fail it; {@link #posted()} says whether it got that far.
 *
 * <p>Threading: immutable, thread-safe.
 */
public final class WorkRequestTimeoutException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Duration timeout;
    /** Whether the request was posted (serialized: the Javadoc tool documents it in the serialized form). */
    private final boolean posted;

    /**
     * The deadline passed.
     *
     * @param what    the operation, e.g. "send"
     * @param timeout the deadline the caller gave
     * @param posted  whether the request was posted (else it waited for queue room and was never posted)
     */
    public WorkRequestTimeoutException(String what, Duration timeout, boolean posted) {
        super(what + (posted ? " did not complete within " + timeout + "; it stays posted (its regions pinned,"
                + " its queue room taken) until the device completes it or the queue pair is closed or reset"
                : " found no queue room within " + timeout + "; it was not posted"));
        this.timeout = timeout;
        this.posted = posted;
    }

    /**
     * The deadline the caller gave.
     *
     * @return the timeout
     */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Whether the request reached the device (and may still complete there).
     *
     * @return {@code true} if it was posted
     */
    public boolean posted() {
        return posted;
    }
}
