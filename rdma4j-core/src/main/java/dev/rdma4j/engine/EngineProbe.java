package dev.rdma4j.engine;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.VerbsException;

/**
 * What the engine's tests look at inside a {@link CompletionEngine}, each asked on the engine's thread (so each
 * waits for it): kept out of the engine's own classes.
 *
 * <p>Threading: any thread but the engine's own.
 */
final class EngineProbe {
    private EngineProbe() {
    }

    /** Whether blocking waiters have borrowed {@code cq}'s channel. */
    static boolean lent(CompletionEngine engine, CompletionQueue cq) {
        boolean[] out = new boolean[1];
        engine.call(() -> {
            DrivenQueue d = engine.turn().home(cq);
            out[0] = d != null && d.channelOut;
        });
        return out[0];
    }

    /**
     * Returns once a whole turn of the engine (its tasks, then its look at every queue) has run after the call (a
     * task runs before its turn's look, and a task queued meanwhile may run in the same turn).
     */
    static void awaitTurn(CompletionEngine engine) {
        long[] seen = new long[1];
        engine.call(() -> seen[0] = engine.turn().turnsDone());
        long start = seen[0];
        while (seen[0] == start) {
            engine.call(() -> seen[0] = engine.turn().turnsDone());
        }
    }

    /**
     * How many times the engine's thread woke only to look at CQs left to their waiters (the cost of
     * {@link CompletionEngine#pollWhileWaiting} to the engine).
     */
    static long waiterLooks(CompletionEngine engine) {
        long[] looks = new long[1];
        engine.call(() -> looks[0] = engine.turn().waiterLooks());
        return looks[0];
    }

    /** The {@code ibv_poll_cq} calls of the engine's thread so far (its drains'; not its waiting callers'). */
    static long polls(CompletionEngine engine) {
        long[] polls = new long[1];
        engine.call(() -> polls[0] = engine.turn().polls());
        return polls[0];
    }

    /** Eventfd writes so far (wake-ups are coalesced: fewer than the tasks submitted). */
    static long wakeWrites(CompletionEngine engine) {
        return engine.turn().wakeWrites();
    }

    /** What the engine does when {@code ibv_poll_cq} fails on {@code cq} (rxe's never does). */
    static void simulatePollFailure(CompletionEngine engine, CompletionQueue cq, VerbsException e) {
        engine.call(() -> engine.turn().simulatePollFailure(cq, e));
    }
}
