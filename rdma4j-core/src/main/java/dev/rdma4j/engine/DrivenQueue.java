package dev.rdma4j.engine;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A completion queue an engine drains, and its state between the engine's turn ({@link EngineTurn}) and the
 * callers that wait on it ({@link CallerWaits}). An {@link AsyncQueuePair} keeps its queues' for
 * {@link CallerWaits#expect}.
 *
 * <p>Threading: the plain fields are the engine thread's, except where a field says it is guarded by {@link #lock}
 * (the engine only ever tries it; a waiting caller holds it for a poll or an arming, never while it sleeps); the
 * volatile and atomic ones are read by any thread.
 */
final class DrivenQueue {
    final CompletionQueue cq;
    final Consumer<WorkCompletion> fallback;
    final CompletionHandler handler;
    boolean ready;
    /**
     * The engine armed the queue and has not read the event of that arming yet (engine thread only): it is not armed
     * again meanwhile, or a queue retried turn after turn (its drain budget spent) would add an event a turn.
     */
    boolean armedByEngine;
    boolean broken;
    /** Polled on every turn in event mode too ({@link CompletionEngine#busyPoll}); read by waiting callers. */
    volatile boolean busy;
    int eventsSinceAck;
    /**
     * Held while a batch is polled and dispatched, by the engine or a waiting caller: the completions of one queue
     * are dispatched in the order polled. The engine only ever tries it.
     */
    final ReentrantLock lock = new ReentrantLock();
    /** Callers polling it while they wait: the engine leaves it to them, unarmed. */
    final AtomicInteger waiters = new AtomicInteger();
    /** The waiting callers' batch (guarded by lock), made at the first such wait. */
    WorkCompletions callerWcs;
    /**
     * When the engine first saw the last waiter gone ({@code System.nanoTime()}, odd), {@link #JUST_LEFT} until it
     * looks, or 0.
     */
    volatile long lastLeft;
    /**
     * {@link #lastLeft} as the last waiter leaves (even, so never a time): the engine's next look stamps it with its
     * own clock read, so that a wait's end reads no clock (one fewer read a blocking receive).
     */
    static final long JUST_LEFT = 2;

    /**
     * Whether the waiters left less than {@code grace} ago ({@code left}: {@link #lastLeft}, not 0; engine thread);
     * the first look after they left stamps the time, the grace counts from it.
     */
    boolean withinGrace(long left, long grace) {
        long now = System.nanoTime();
        if (left == JUST_LEFT) {
            lastLeft = now | 1; // a waiter leaving meanwhile writes JUST_LEFT again, or leaves this stamp: both fine
            return true;
        }
        return now - left < grace;
    }

    /**
     * Left to waiters, unarmed (engine thread): they are there or were within {@link EngineTurn#WAITER_GRACE_NANOS};
     * the engine looks at it every 1 to 8 ms and arms it once they have been gone a millisecond.
     */
    boolean waitersRecently;
    /**
     * The queue's own completion channel ({@link CompletionEngine#createCompletionQueueWithOwnChannel}), which a
     * blocking caller sleeps on; null when the queue shares its context's channel.
     */
    final CompletionChannel own;
    /** {@link #own}'s key among the engine's epoll sources. */
    long ownId;
    /**
     * {@link #own} is out of the engine's epoll set, lent to blocking callers, who read its events (set and
     * cleared under lock; the engine's turn reads it without).
     */
    volatile boolean channelOut;
    /** A caller sleeps on this queue's channel (one at a time). */
    final AtomicBoolean blocking = new AtomicBoolean();
    /**
     * How a blocking caller armed the queue since the last event it read (guarded by lock): 0 not, 1 for
     * solicited completions only, 2 for every completion.
     */
    int armedByCaller;
    /**
     * A blocking caller armed it for solicited completions only, perhaps one that has left since (a caller arms after
     * each event it reads, as C's loop; {@link CallerWaits#expect} re-arms it for all).
     */
    volatile boolean armedSolicited;
    /**
     * A request whose completion a future or a handler expects was posted (or awaited) while the channel was
     * lent ({@link CallerWaits#expect}): the engine takes the channel back as soon as no caller sleeps on it, not a
     * millisecond after it first saw the last one gone (cleared when it does).
     */
    volatile boolean expecting;
    /** The blocking caller's {@code poll(2)} and {@code epoll_ctl} scratch (made at the first such wait). */
    MemorySegment pollfd;
    MemorySegment ctlScratch;

    DrivenQueue(CompletionQueue cq, Consumer<WorkCompletion> fallback, CompletionHandler handler,
            CompletionChannel own) {
        this.cq = cq;
        this.fallback = fallback;
        this.handler = handler;
        this.own = own;
    }

    /** Frees the waiting callers' batch of a queue none waits on any more (pruned, or the engine shut down). */
    void closeCallerBatch() {
        if (lock.tryLock()) {
            try {
                if (callerWcs != null) {
                    callerWcs.close();
                    callerWcs = null;
                }
            } finally {
                lock.unlock();
            }
        }
    }
}
