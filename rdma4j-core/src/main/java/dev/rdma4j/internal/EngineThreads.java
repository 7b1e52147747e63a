package dev.rdma4j.internal;

/**
 * Marks the threads of completion engines, so that blocking calls of the core ({@code CompletionQueue.await},
 * {@code CompletionChannel.awaitEvent}) can refuse to block one (Netty's {@code BlockingOperationException}).
 * Not exported.
 */
public final class EngineThreads {
    /**
     * A thread's mark, changed in place: a waiting caller marks and unmarks itself around every dispatch (see
     * {@code CompletionEngine.pollWhileWaiting}), and {@code ThreadLocal.set}/{@code remove} there made a map entry
     * (a weak reference) and cleared it again each time.
     */
    private static final class Mark {
        String engine;
    }

    private static final ThreadLocal<Mark> MARK = ThreadLocal.withInitial(Mark::new);

    private EngineThreads() {
    }

    /**
     * Called by an engine's thread when it starts, and around the dispatch a waiting caller does for an engine.
     *
     * @param engine the engine's name, or null to unmark
     * @return the mark before
     */
    public static String markCurrent(String engine) {
        Mark m = MARK.get();
        String before = m.engine;
        m.engine = engine;
        return before;
    }

    /**
     * Whether the calling thread is an engine's, or dispatches for one now.
     *
     * @return true if marked
     */
    public static boolean isMarked() {
        return MARK.get().engine != null;
    }

    /**
     * Throws when the calling thread is an engine's.
     *
     * @param method what would block, for the message
     */
    public static void refuseBlocking(String method) {
        String engine = MARK.get().engine;
        if (engine != null) {
            throw new IllegalStateException(method + " blocks and was called on the thread of completion engine "
                    + engine + ", where it would stop every other completion: call it from another thread");
        }
    }
}
