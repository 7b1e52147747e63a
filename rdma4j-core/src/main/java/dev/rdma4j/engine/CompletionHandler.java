package dev.rdma4j.engine;

/**
 * Takes the completions of a CQ that a {@link CompletionEngine} drives and that are not an
 * {@link AsyncQueuePair}'s (requests posted on a {@code QueuePair} directly, with the caller's wr_ids): the
 * allocation-free form of the engine's fallback handler
 * ({@link CompletionEngine#createCompletionQueueWithHandler}).
 *
 * <p>Threading: called on the engine thread, one completion at a time, in the order {@code ibv_poll_cq} returned
 * them. It must not block (it holds up every CQ and task of the engine); an exception it throws is counted in
 * {@link CompletionEngine#callbackFailures()} and logged, and the engine goes on with the next completion.
 */
@FunctionalInterface
public interface CompletionHandler {
    /**
     * One completion.
     *
     * @param completion the completion, valid during this call only
     */
    void onCompletion(CompletionView completion);
}
