package dev.rdma4j.engine;

/**
 * A snapshot of a {@link CompletionEngine}'s counters since it was built ({@link CompletionEngine#counters()}): what
 * its thread and its waiting callers did. Counting costs the engine plain field increments on its own thread
 * (waiting callers' counts are shared adders, already kept); a snapshot reads them without stopping the engine, so
 * its numbers may lag the engine's latest turn.
 *
 * <p>Threading: immutable.
 *
 * @param turns                the turns of the engine's loop ({@code epoll_wait} and what followed, or a pass of
 *                             polling)
 * @param completions          work completions the engine's thread polled ({@code ibv_poll_cq}) and dispatched
 * @param completionsByWaiters work completions callers waiting in {@link CompletionEngine#pollWhileWaiting} or
 *                             {@link CompletionEngine#blockWhileWaiting} polled and dispatched on their own threads
 * @param failedCompletions    of both, those whose status was not {@code IBV_WC_SUCCESS} (flushed ones included)
 * @param asyncEvents          asynchronous events read from the contexts it watches
 *                             ({@link CompletionEngine#watchAsyncEvents}, {@code ibv_get_async_event})
 * @param wakeUps              writes to its eventfd that woke it (coalesced: fewer than the tasks submitted)
 * @param waiterWakeUps        completion events that woke callers sleeping in
 *                             {@link CompletionEngine#blockWhileWaiting}
 * @param callbackFailures     callbacks that threw; each was logged and the engine went on
 */
public record EngineCounters(long turns, long completions, long completionsByWaiters, long failedCompletions,
        long asyncEvents, long wakeUps, long waiterWakeUps, long callbackFailures) {
}
