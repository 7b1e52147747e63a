package dev.rdma4j.engine;

import dev.rdma4j.CompletionQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * {@link CompletionEngine#drainAsync}'s work, a task of the engine's: polls a queue until it is empty, every completion
 * dispatched, then completes its future there (so its continuations run before any later completion of the queue).
 * A turn's budget is not this drain's limit; 64 budgets keep a queue that never empties (a peer sending without
 * pause) from holding the engine. Callers that wait poll the queue too: whoever holds its lock dispatches, in
 * order; while one does, the task queues itself again, so that the engine's other work runs.
 *
 * <p>Threading: runs on the engine's thread only.
 */
final class DrainTask implements Runnable {
    private static final int MAX_BUDGETS = 64;

    private final EngineTurn turn;
    private final Executor engine;
    private final CompletionQueue cq;
    private final CompletableFuture<Void> done;
    private int budgets;

    DrainTask(EngineTurn turn, Executor engine, CompletionQueue cq, CompletableFuture<Void> done) {
        this.turn = turn;
        this.engine = engine;
        this.cq = cq;
        this.done = done;
    }

    @Override
    public void run() {
        DrivenQueue d = turn.home(cq);
        if (d == null) {
            done.completeExceptionally(new IllegalArgumentException(cq + " is not driven by this engine"
                    + (cq.isClosed() ? " (it is closed)" : "")));
            return;
        }
        for (; budgets < MAX_BUDGETS; budgets++) {
            if (!d.lock.tryLock()) {
                try {
                    engine.execute(this);
                } catch (RejectedExecutionException closing) {
                    done.completeExceptionally(closing);
                }
                return;
            }
            try {
                if (turn.drainLocked(d)) {
                    break;
                }
            } finally {
                d.lock.unlock();
            }
        }
        done.complete(null);
    }
}
