package dev.rdma4j.internal;

import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;
import java.lang.foreign.MemorySegment;

/**
 * What the other rdma4j packages (rdma_cm in {@code dev.rdma4j.connect}) may do with the verbs objects
 * beyond their public API; implemented by {@code dev.rdma4j}, never exported (the JDK's SharedSecrets
 * pattern).
 */
public interface Access {
    /** Creates a QP on an rdma_cm id: {@code create} runs rdma_create_qp, {@code destroy} rdma_destroy_qp. */
    interface QpVerbs {
        MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws VerbsException;

        void destroy(MemorySegment qp) throws VerbsException;
    }

    /**
     * What drives a queue pair's requests instead of its caller (the engine's {@code AsyncQueuePair}): it
     * owns the QP's wr_ids, takes its completions, and learns when its requests are discarded.
     */
    interface QpDriver {
        /**
         * The QP was reset ({@code destroyed == false}) or destroyed: none of the requests posted so far will
         * complete. Runs on the thread that reset or closed the QP, after its locks are released.
         */
        void discarded(boolean destroyed);
    }

    /**
     * Makes {@code driver} the only poster on {@code qp}: the QP's public posts are refused from now on,
     * {@link #post(QueuePair, dev.rdma4j.SendBatch)} and {@link #post(QueuePair, dev.rdma4j.ReceiveBatch)} post
     * for the driver, and {@link #driver(dev.rdma4j.WorkCompletions, int)} names it for the QP's completions.
     *
     * @throws IllegalStateException if the QP is closed or already driven
     */
    void drive(QueuePair qp, QpDriver driver);

    /**
     * Makes {@code engineThread} the only thread that may poll {@code cq}: its public {@code poll} refuses
     * every other (the engine's completions would otherwise go to whoever polled first).
     */
    void drive(dev.rdma4j.CompletionQueue cq, Thread engineThread);

    /**
     * {@code CompletionQueue.poll} for the engine that drives {@code cq}, on any thread: a caller that waits and
     * dispatches the queue's completions itself (the engine serialises its pollers).
     */
    int pollForDriver(dev.rdma4j.CompletionQueue cq, dev.rdma4j.WorkCompletions wcs) throws VerbsException;

    /** The driver of the QP whose request completion {@code i} of the last poll is, or null. */
    QpDriver driver(dev.rdma4j.WorkCompletions wcs, int i);

    /** {@code QueuePair.post} for its driver. */
    void post(QueuePair qp, dev.rdma4j.SendBatch batch) throws VerbsException;

    /** Sets the wr_id of completion {@code i} to 0 (a driver's request: the caller gave none). */
    void clearWrId(dev.rdma4j.WorkCompletions wcs, int i);

    /** {@code QueuePair.post} for its driver. */
    void post(QueuePair qp, dev.rdma4j.ReceiveBatch batch) throws VerbsException;

    /**
     * A driver posts a caller's chain: the wr_id handed back for request {@code i} is {@code idBase | i << 48}
     * (the batch itself is left unchanged).
     */
    void postChain(QueuePair qp, dev.rdma4j.SendBatch batch, long idBase) throws VerbsException;

    /** Whether request {@code i} of the batch is signaled. */
    boolean isSignaled(dev.rdma4j.SendBatch batch, int i);

    /** A Context over an {@code ibv_context} that librdmacm opened and will close. */
    Context borrowContext(MemorySegment ibvContext) throws VerbsException;

    MemorySegment handle(ProtectionDomain pd);

    QueuePair createQueuePair(QueuePair.Builder builder, QpVerbs verbs) throws VerbsException;

    /** rdma_cm moved the QP itself (connect/accept/disconnect). */
    void stateChanged(QueuePair qp, QpState state);

    /** {@code poll(2)} on a completion channel's fd, kept open meanwhile; 1, 0 or -errno. */
    int pollReadable(dev.rdma4j.CompletionChannel ch, int ms, MemorySegment pollfd);

    /** {@code epoll_ctl} of a completion channel's fd ({@code EPOLLIN | EPOLLET}), kept open meanwhile; 0 or -errno. */
    int epollCtl(dev.rdma4j.CompletionChannel ch, int epfd, int op, long id, MemorySegment scratch);

    /** Set once by dev.rdma4j's initialisation. */
    static Access get() {
        Holder.init();
        return Holder.access;
    }

    /** Holds the implementation. */
    final class Holder {
        static volatile Access access;

        private Holder() {
        }

        public static void set(Access a) {
            access = a;
        }

        static void init() {
            if (access == null) {
                try {
                    Class.forName("dev.rdma4j.AccessImpl", true, Access.class.getClassLoader());
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
