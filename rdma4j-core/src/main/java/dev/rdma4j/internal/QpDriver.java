package dev.rdma4j.internal;

/**
 * What drives a queue pair's requests instead of its caller (the engine's {@code AsyncQueuePair}): it owns the
 * QP's wr_ids, takes its completions, and learns when its requests are discarded. The verbs layer holds it and
 * calls it; the engine implements it.
 *
 * <p>Threading: {@link #discarded} runs on the thread that reset or closed the QP.
 */
public interface QpDriver {
    /**
     * The QP was reset ({@code destroyed == false}) or destroyed: none of the requests posted so far will complete.
     * Runs on the thread that reset or closed the QP, after its locks are released.
     *
     * @param destroyed whether the QP is gone (else reset)
     */
    void discarded(boolean destroyed);
}
