package dev.rdma4j.engine;

import dev.rdma4j.WorkCompletions;

/**
 * Takes the completions of the requests an {@link AsyncQueuePair} posted with a tag of the caller's
 * ({@link AsyncQueuePair#sendTagged}, {@link AsyncQueuePair#receiveTagged}): the allocation-free form of its
 * futures, for code that keeps its own per-request state (a buffer slot, say) and posts and completes without
 * making an object per request. rdma4j still owns the wr_ids: the tag is the caller's, kept beside the request.
 *
 * <p>Threading: called on the thread that dispatches the completion (the engine's, or a caller's waiting in
 * {@link CompletionEngine#pollWhileWaiting}), one completion of a CQ at a time, in the order {@code ibv_poll_cq}
 * returned them; {@link #onFailure} also on the thread that closes or resets the queue pair or the engine. It
 * must not block; an exception it throws is counted in {@link CompletionEngine#callbackFailures()} and logged.
 */
public interface RequestHandler {
    /**
     * The request tagged {@code tag} completed, successfully or not ({@code batch.status(index)}).
     *
     * @param tag   the caller's tag, as posted
     * @param batch the completions {@code ibv_poll_cq} returned, valid during this call only (reused after it);
     *              its wr_id at {@code index} is rdma4j's, not the tag
     * @param index this completion's place in {@code batch}
     */
    void onCompletion(long tag, WorkCompletions batch, int index);

    /**
     * The request tagged {@code tag} will not complete on the device: its queue pair was closed or reset, its
     * engine closed, or its CQ failed.
     *
     * @param tag    the caller's tag, as posted
     * @param reason what happened ({@code WR_FLUSH_ERR} and the reason)
     */
    void onFailure(long tag, WorkRequestException reason);
}
