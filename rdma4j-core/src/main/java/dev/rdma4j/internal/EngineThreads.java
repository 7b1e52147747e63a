package dev.rdma4j.internal;

/**
 * Marks the threads of completion engines, so that blocking calls of the core ({@code CompletionQueue.await},
 * {@code CompletionChannel.awaitEvent}) can refuse to block one (Netty's {@code BlockingOperationException}).
 * Not exported.
 */
public final class EngineThreads {
    private static final ThreadLocal<String> NAME = new ThreadLocal<>();

    private EngineThreads() {
    }

    /**
     * Called by an engine's thread when it starts, and around the dispatch a waiting caller does for an engine.
     *
     * @param engine the engine's name, or null to unmark
     * @return the mark before
     */
    public static String markCurrent(String engine) {
        String before = NAME.get();
        if (engine == null) {
            NAME.remove();
        } else {
            NAME.set(engine);
        }
        return before;
    }

    /**
     * Whether the calling thread is an engine's, or dispatches for one now.
     *
     * @return true if marked
     */
    public static boolean isMarked() {
        return NAME.get() != null;
    }

    /**
     * Throws when the calling thread is an engine's.
     *
     * @param method what would block, for the message
     */
    public static void refuseBlocking(String method) {
        String engine = NAME.get();
        if (engine != null) {
            throw new IllegalStateException(method + " blocks and was called on the thread of completion engine "
                    + engine + ", where it would stop every other completion: call it from another thread");
        }
    }
}
