package dev.rdma4j.internal.access;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.SendBatch;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.QpDriver;
import dev.rdma4j.internal.QpVerbs;
import java.lang.foreign.MemorySegment;

/**
 * What the other rdma4j packages (the engine, rdma_cm in {@code dev.rdma4j.connect}) may do with the verbs objects
 * beyond their public API; never exported. The JDK's SharedSecrets pattern without its import circle: the verbs
 * package does not implement this interface (it would then depend on this package, and this package on it);
 * {@link #get()}'s implementation reaches the verbs' package-private methods through method handles from a
 * private lookup (the same module), constants the JIT inlines.
 *
 * <p>Threading: stateless; each method has the threading of the member it reaches.
 */
public interface Access {
    /**
     * Makes {@code driver} the only poster on {@code qp}: the QP's public posts are refused from now on,
     * {@link #post(QueuePair, SendBatch)} and {@link #post(QueuePair, ReceiveBatch)} post for the driver, and
     * {@link #driver(WorkCompletions, int)} names it for the QP's completions.
     *
     * @throws IllegalStateException if the QP is closed or already driven
     */
    void drive(QueuePair qp, QpDriver driver);

    /**
     * Makes {@code engineThread} the only thread that may poll {@code cq}: its public {@code poll} refuses every
     * other (the engine's completions would otherwise go to whoever polled first).
     */
    void drive(CompletionQueue cq, Thread engineThread);

    /**
     * {@code CompletionQueue.poll} for the engine that drives {@code cq}, on any thread: a caller that waits and
     * dispatches the queue's completions itself (the engine serialises its pollers).
     */
    int pollForDriver(CompletionQueue cq, WorkCompletions wcs) throws VerbsException;

    /**
     * How many send requests the engine driving {@code cq} posted to the queue pairs whose sends complete there (a
     * count of its thread's that wraps): its drain polls again after a dispatch only when it changed.
     */
    int sendsPosted(CompletionQueue cq);

    /** The driver of the QP whose request completion {@code i} of the last poll is, or null. */
    QpDriver driver(WorkCompletions wcs, int i);

    /** {@code QueuePair.post} for its driver. */
    void post(QueuePair qp, SendBatch batch) throws VerbsException;

    /** Forgets completion {@code i}'s wr_id once its driver took it. */
    void clearWrId(WorkCompletions wcs, int i);

    /** {@code QueuePair.post} for its driver. */
    void post(QueuePair qp, ReceiveBatch batch) throws VerbsException;

    /** Posts the batch as one chain whose requests take the wr_ids {@code idBase}, {@code idBase + 1}, .... */
    void postChain(QueuePair qp, SendBatch batch, long idBase) throws VerbsException;

    /** How many requests of the batch its last post put on the device (none when rdma4j refused it first). */
    int posted(SendBatch batch);

    /** Whether request {@code i} of the batch asks for a completion. */
    boolean isSignaled(SendBatch batch, int i);

    /** A context over an {@code ibv_context} librdmacm opened (and closes). */
    Context borrowContext(MemorySegment ibvContext) throws VerbsException;

    /** The {@code struct ibv_pd *}. */
    MemorySegment handle(ProtectionDomain pd);

    /** Builds the queue pair with {@code verbs} (rdma_cm's create and destroy). */
    QueuePair createQueuePair(QueuePairBuilder builder, QpVerbs verbs) throws VerbsException;

    /** rdma_cm moved the QP to {@code state}. */
    void stateChanged(QueuePair qp, QpState state);

    /** Names the owner of {@code srq} (a {@code ReceivePool}'s) in the refusals its users see. */
    void nameOwner(SharedReceiveQueue srq, String owner);

    /**
     * {@code ibv_get_cq_event} on a channel an engine drives, from a caller the engine lent it to (the public
     * {@code nextEvent} refuses other threads than the engine's).
     */
    CompletionQueue nextEvent(CompletionChannel ch, boolean readable) throws VerbsException;

    /** {@code poll(2)} on the channel's fd for up to {@code ms}, with {@code pollfd} as scratch. */
    int pollReadable(CompletionChannel ch, int ms, MemorySegment pollfd);

    /** {@code epoll_ctl(2)} of the channel's fd on {@code epfd}, with {@code scratch} for the event. */
    int epollCtl(CompletionChannel ch, int epfd, int op, long id, MemorySegment scratch);

    /**
     * The implementation.
     *
     * @return the one instance
     */
    static Access get() {
        return VerbsHandles.INSTANCE;
    }
}
