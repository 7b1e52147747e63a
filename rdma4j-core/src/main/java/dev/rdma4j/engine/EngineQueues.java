package dev.rdma4j.engine;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The completion queues an engine makes ({@code ibv_create_cq}) and their completion channels: each context's
 * shared channel ({@code ibv_create_comp_channel}, made at its first queue, put into the engine's epoll set, closed
 * with the engine or, if queues outlive it, with its last one), or a channel of the queue's own; each new queue
 * is handed to the engine's turn on its thread ({@link EngineTurn#addQueue}).
 *
 * <p>Threading: thread-safe (the shared channels under this object's lock).
 */
final class EngineQueues {
    private final CompletionEngine engine;
    /** Each context's shared completion channel (guarded by this). */
    private final Map<Context, CompletionChannel> channels = new HashMap<>();

    EngineQueues(CompletionEngine engine) {
        this.engine = engine;
    }

    CompletionQueue create(Context ctx, int minSize, Consumer<WorkCompletion> fallback,
            CompletionHandler handler, boolean ownChannel) throws VerbsException {
        return create(ctx, minSize, fallback, handler, ownChannel, false, false);
    }

    /** With {@code extended}: an {@code ibv_create_cq_ex} queue (timestamps if asked), driven as any other. */
    CompletionQueue create(Context ctx, int minSize, Consumer<WorkCompletion> fallback,
            CompletionHandler handler, boolean ownChannel, boolean extended, boolean timestamps) throws VerbsException {
        engine.ensureOpen();
        CompletionChannel ch = ownChannel ? ctx.createCompletionChannel() : channelFor(ctx);
        CompletionQueue cq;
        try {
            cq = extended ? ctx.createExtendedCompletionQueue(minSize, ch, 0, timestamps)
                    : ctx.createCompletionQueue(minSize, ch, 0);
        } catch (VerbsException | RuntimeException e) {
            if (ownChannel) {
                ch.close();
            }
            throw e;
        }
        if (ownChannel) {
            ch.closeWhenIdle(); // with its queue
        }
        try {
            engine.call(() -> engine.turn().addQueue(new DrivenQueue(cq, fallback, handler, ownChannel ? ch : null)));
        } catch (RuntimeException e) {
            cq.close();
            throw e;
        }
        return cq;
    }

    private synchronized CompletionChannel channelFor(Context ctx) throws VerbsException {
        CompletionChannel ch = channels.get(ctx);
        if (ch == null || ch.isClosed()) {
            CompletionChannel created = ctx.createCompletionChannel();
            CompletionChannel stale = ch; // closed by its context while idle: the kernel dropped its fd already
            try {
                engine.call(() -> engine.turn().addChannel(created, stale));
            } catch (RuntimeException e) {
                created.close();
                throw e;
            }
            channels.put(ctx, created);
            ch = created;
        }
        return ch;
    }

    /** The shut-down's last step: the shared channels close, each now or with its last CQ. */
    synchronized void closeChannels() {
        channels.values().forEach(CompletionChannel::closeWhenIdle);
    }
}
