package dev.rdma4j.engine;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Drives completion queues on one platform thread of its own and completes the futures of
 * {@link AsyncQueuePair}s.
 *
 * <p>In {@link PollingMode#EVENT} mode each CQ reports to a completion channel whose fd is non-blocking and
 * registered with epoll (the engine's shared channels level-triggered, a queue's own channel edge-triggered). The
 * cycle is {@code epoll_wait} → one {@code ibv_get_cq_event} per report (an event left pending is reported again)
 * → {@code ibv_req_notify_cq} → <b>drain after arming</b>, as C's event loops do: a completion that landed before
 * the arming is found by the drain, one after it raises an event, so the engine has no lost wake-ups. The drain
 * polls until a poll finds nothing: after a poll that dispatched something once more even when it emptied the CQ
 * ({@link dev.rdma4j.WorkCompletions#emptied()}), since what it ran may have posted requests whose completions are
 * there already; a full batch of dropped completions does not end it. Events are acknowledged in batches
 * ({@code ibv_ack_cq_events}), and all of them before a CQ is destroyed. No timeout is needed for correctness:
 * epoll waits without one. An eventfd wakes the thread for submitted work and for shutdown.
 *
 * <p>Completion callbacks (future stages) run on the engine thread unless the caller chains
 * {@code ...Async} stages with an executor. The thread blocks in {@code epoll_wait}: a platform thread,
 * so no virtual-thread carrier is ever pinned.
 *
 * <p>Close order: queue pairs and CQs created through the engine before the engine, the engine before
 * its contexts.
 *
 * <p>Threading: thread-safe. Everything it calls back (completions, continuations without an executor, fallback
 * handlers, watched-fd handlers, listeners, tasks given to {@link #execute}) runs on its one thread, or, for the
 * completions of a CQ a caller waits on ({@link #pollWhileWaiting}, {@link #blockWhileWaiting}), on that caller's
 * thread, and must not block: a blocking call there stops every other completion (the blocking view of {@link AsyncQueuePair}
 * detect it and throw). A callback's {@code RuntimeException} is logged and counted ({@link
 * #callbackFailures()}); an {@code Error} ends the engine ({@link #terminationCause()}).
 *
 * <p>Inside, as Netty splits its event loop from its {@code IoHandler} and Agrona its {@code AgentRunner} from the
 * agent: an {@code EngineRunner} owns the thread (its own, or the caller's loop for {@link #runOnce}), the task queue,
 * the close and the termination; an {@code EngineTurn} is one pass of the loop over the epoll set, the wake-up
 * eventfd, the watched fds and the CQs (arm, drain, acknowledge), whose completions a {@code Dispatcher} hands to
 * their owners; {@code CallerWaits} lets a waiting caller poll or sleep on a CQ itself.
 */
public final class CompletionEngine implements AutoCloseable, java.util.concurrent.Executor {
    private final EngineRunner runner;
    private final EngineTurn turn;
    private final Dispatcher dispatcher;
    private final CallerWaits waits;
    /** Async events read by {@link #watchAsyncEvents}'s handlers (on the engine thread). */
    private long asyncEvents;
    private final EngineQueues queues;

    private CompletionEngine(Builder b) throws VerbsException {
        this.queues = new EngineQueues(this);
        this.runner = b.external ? new EngineRunner.CallersLoop(b.name, queues::closeChannels)
                : new EngineRunner.OwnThread(b.name, queues::closeChannels);
        this.dispatcher = new Dispatcher(b.name, b.pollBatch);
        try {
            this.turn = new EngineTurn(b.mode, b.idle.get(), dispatcher, runner);
        } catch (VerbsException | RuntimeException e) {
            dispatcher.close();
            throw e;
        }
        this.waits = new CallerWaits(this, turn, dispatcher);
        runner.start(turn);
    }

    /** The turn (its registration runs on the engine's thread: {@link #call}). */
    EngineTurn turn() {
        return turn;
    }

    /** Throws {@link IllegalStateException} once the close has begun (or the engine died). */
    void ensureOpen() {
        runner.ensureOpen();
    }

    /**
     * A builder: {@link PollingMode#EVENT}, thread name "rdma4j-engine", 32 completions per poll.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The polling mode.
     *
     * @return the mode
     */
    public PollingMode mode() {
        return turn.mode();
    }

    /**
     * Creates a completion queue this engine drives ({@code ibv_create_cq} on the engine's completion
     * channel for {@code ctx}, armed with {@code ibv_req_notify_cq} in event mode).
     *
     * @param ctx     the context
     * @param minSize the least number of entries
     * @return the queue; build {@link AsyncQueuePair}s on it
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueue(Context ctx, int minSize) throws VerbsException {
        return createCompletionQueue(ctx, minSize, null);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int)}, with a handler for completions that are not
     * from an {@link AsyncQueuePair} (requests posted directly on a {@code QueuePair} with caller wr_ids).
     *
     * @param ctx      the context
     * @param minSize  the least number of entries
     * @param fallback called on the engine thread with each such completion, or null to drop them
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueue(Context ctx, int minSize, Consumer<WorkCompletion> fallback)
            throws VerbsException {
        return queues.create(ctx, minSize, fallback, null, false);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int, Consumer)}, with a handler that reads each such completion
     * in place ({@link CompletionView}, valid during the call): nothing is allocated per completion.
     *
     * @param ctx      the context
     * @param minSize  the least number of entries
     * @param handler  called on the engine thread with each completion that is not an {@link AsyncQueuePair}'s
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueueWithHandler(Context ctx, int minSize, CompletionHandler handler)
            throws VerbsException {
        return queues.create(ctx, minSize, null, java.util.Objects.requireNonNull(handler, "handler"), false);
    }

    /**
     * Like {@link #createCompletionQueue(Context, int)}, with a completion channel of the queue's own
     * ({@code ibv_create_comp_channel}, then {@code ibv_create_cq} on it: one more fd) instead of the context's
     * shared one: a caller that waits for its completions can then sleep on that
     * channel itself ({@link #blockWhileWaiting}) and dispatch them on its own thread, the event loop of a C
     * program, with no hand-off from the engine's thread. The channel closes with the queue.
     *
     * @param ctx     the context
     * @param minSize the least number of entries
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public CompletionQueue createCompletionQueueWithOwnChannel(Context ctx, int minSize) throws VerbsException {
        return queues.create(ctx, minSize, null, null, true);
    }

    /**
     * {@link #createCompletionQueue(Context, int)} with an extended queue ({@code ibv_create_cq_ex}, see
     * {@link Context#createExtendedCompletionQueue}): the engine polls it through {@code ibv_start_poll} and the
     * {@code ibv_wc_read_*} accessors, with the same arm-then-drain discipline.
     *
     * @param ctx        the context
     * @param minSize    the least number of entries
     * @param timestamps whether entries carry completion timestamps (refused where the device has none)
     * @return the queue
     * @throws VerbsException if a verb fails
     * @throws IllegalStateException if the engine is closed or closing
     */
    public CompletionQueue createExtendedCompletionQueue(Context ctx, int minSize, boolean timestamps)
            throws VerbsException {
        return queues.create(ctx, minSize, null, null, false, true, timestamps);
    }

    /**
     * Wraps a queue pair whose CQs this engine drives, for futures-based and blocking operations.
     *
     * @param qp the queue pair; the wrapper owns it from now on: closing the wrapper closes the QP, the
     *           QP's own posts are refused (the wrapper owns its wr_ids), and a reset or a direct close of
     *           the QP fails the wrapper's pending futures
     * @return the async view
     * @throws IllegalStateException    if this engine or the QP is closed, or the QP is already wrapped
     * @throws IllegalArgumentException if the QP's CQs were not created by this engine
     */
    public AsyncQueuePair wrap(dev.rdma4j.QueuePair qp) {
        return wrap(qp, null);
    }

    /**
     * {@link #wrap(dev.rdma4j.QueuePair)} with a handler of tagged requests: the wrapper also posts sends and
     * receives with a tag of the caller's ({@link AsyncQueuePair#sendTagged}, {@link AsyncQueuePair#receiveTagged})
     * whose completions go to {@code handler}, allocating nothing per request.
     *
     * @param qp      the queue pair (see {@link #wrap(dev.rdma4j.QueuePair)})
     * @param handler takes the tagged requests' completions; null for none
     * @return the async view
     * @throws IllegalStateException    if this engine or the QP is closed, or the QP is already wrapped
     * @throws IllegalArgumentException if the QP's CQs were not created by this engine
     */
    public AsyncQueuePair wrap(dev.rdma4j.QueuePair qp, RequestHandler handler) {
        runner.ensureOpen();
        if (qp.isClosed()) {
            throw new IllegalStateException("cannot wrap " + qp + ": it is closed");
        }
        for (CompletionQueue cq : List.of(qp.sendCompletionQueue(), qp.receiveCompletionQueue())) {
            if (turn.home(cq) == null) {
                throw new IllegalArgumentException("cannot wrap " + qp + ": its " + (cq == qp.sendCompletionQueue()
                        ? "send" : "receive") + " CQ " + cq + " is not driven by this engine, so nothing would"
                        + " complete its futures; create its CQs with this engine's createCompletionQueue");
            }
        }
        AsyncQueuePair a = new AsyncQueuePair(this, qp, handler);
        dispatcher.register(a);
        return a;
    }

    void forget(AsyncQueuePair a) {
        dispatcher.forget(a);
    }

    /**
     * Watches the context's async event fd: pending events are read ({@code ibv_get_async_event}),
     * acknowledged and delivered to their objects' listeners on the engine thread.
     *
     * @param ctx the context
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), or
     *         externally driven and never turned
     */
    public void watchAsyncEvents(Context ctx) {
        watch(ctx.asyncEventFd(), () -> asyncEvents += ctx.processAsyncEvents());
    }

    /**
     * Watches any non-blocking fd edge-triggered ({@code EPOLLIN | EPOLLET}): {@code onReadable} runs on the
     * engine thread once at registration and whenever the fd becomes readable, and must consume
     * everything pending (read until EAGAIN). rdma_cm event channels and async event fds use this.
     *
     * @param fd         a non-blocking file descriptor
     * @param onReadable the handler; an {@link IllegalStateException} from it (its object was closed)
     *                   unregisters it
     * @throws IllegalStateException if the engine is closed or closing (also when the close races this call), if
     *         {@code epoll_ctl} refuses the fd, or if the engine is externally driven and never turned
     */
    public void watch(int fd, Runnable onReadable) {
        runner.ensureOpen();
        call(() -> turn.addWatch(fd, onReadable)); // edge-triggered: what is already pending is taken at once
    }

    /**
     * Whether {@link #close()} has begun: posts through its {@link AsyncQueuePair}s then fail at once.
     *
     * @return {@code true} once closing
     */
    public boolean isClosed() {
        return runner.isClosed();
    }

    /**
     * Whether the calling thread is this engine's thread (Netty's {@code inEventLoop()}): completion
     * callbacks, listeners and continuations of the futures it completes run there, and nothing that waits
     * for the engine may run there.
     *
     * @return {@code true} on the engine thread
     */
    public boolean inEngineThread() {
        return runner.inEngineThread();
    }

    /**
     * Whether this engine runs no thread of its own but is driven by its caller's loop through {@link #runOnce}
     * ({@link Builder#externallyDriven()}).
     *
     * @return {@code true} when externally driven
     */
    public boolean isExternallyDriven() {
        return runner instanceof EngineRunner.CallersLoop;
    }

    /**
     * One turn of an {@linkplain Builder#externallyDriven() externally driven} engine on the calling thread, which
     * becomes the engine's thread at its first call (Netty's {@code IoHandler.run}): {@code epoll_wait} for at
     * most {@code timeoutMillis} (0: do not wait; -1: until something happens), then what the engine's own thread
     * does in one pass of its loop: wake-ups consumed, watched fds' handlers run, the channels' events taken
     * ({@code ibv_get_cq_event}), each ready CQ re-armed ({@code ibv_req_notify_cq}) and drained, the tasks given to
     * {@link #execute} run. In {@link PollingMode#BUSY_POLL} it never waits and polls every CQ; in
     * {@link PollingMode#ADAPTIVE} it polls, and once its idle strategy is exhausted arms every CQ and waits as in
     * event mode. After {@link #close()} the turn ends the shut-down (tasks run, futures failed, fds closed).
     *
     * @param timeoutMillis how long to wait for something to happen: -1 (indefinitely), 0, or a number of ms;
     *                      a CQ left non-empty by its per-turn budget makes the turn not wait
     * @return how much was done: completions dispatched, fd events handled and tasks run
     * @throws IllegalStateException    if the engine runs its own thread, or another thread drives it already
     * @throws IllegalArgumentException if {@code timeoutMillis < -1}
     */
    public int runOnce(int timeoutMillis) {
        if (!(runner instanceof EngineRunner.CallersLoop loop)) {
            throw new IllegalStateException("CompletionEngine " + runner.name + " runs on its own thread: runOnce is for an"
                    + " engine built with externallyDriven()");
        }
        return loop.runOnce(timeoutMillis);
    }

    /**
     * Wakes the engine's thread from its {@code epoll_wait} (an eventfd write, coalesced: while one is not yet
     * consumed, more are not written): for the loop that drives an {@linkplain Builder#externallyDriven()
     * externally driven} engine when it has work of its own (Netty's {@code IoHandler.wakeup}). Does nothing
     * once the engine has shut down.
     */
    public void wakeUp() {
        turn.wake();
    }

    /**
     * Throws when a blocking call is made on the engine thread, where it would wait for completions that
     * only this thread delivers (Netty's {@code BlockingOperationException}).
     */
    void refuseBlockingOnEngineThread(String method) {
        if (inEngineThread() || dev.rdma4j.internal.EngineThreads.isMarked()) { // or dispatching as a waiter
            throw new IllegalStateException(method + " blocks and was called on the engine thread (e.g. from a"
                    + " future's continuation or a listener), where it would deadlock the engine: use its ...Async"
                    + " form there, or move the work to another executor");
        }
    }

    /**
     * Completes once every completion {@code cq} holds now has been dispatched: on the engine thread, polls it
     * ({@code ibv_poll_cq}) until it is empty, handing each completion to its future or fallback handler, then
     * completes the returned future there (so its continuations run before any later completion of the CQ).
     * E.g. to end a stream of messages only after those that arrived before the peer's disconnect, whose
     * event may be handled before the CQ is polled.
     *
     * @param cq a completion queue this engine drives
     * @return completes after the drain; exceptionally with {@link RejectedExecutionException} if the engine is
     *         closing, or {@link IllegalArgumentException} if it does not drive {@code cq}
     */
    public java.util.concurrent.CompletableFuture<Void> drainAsync(CompletionQueue cq) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        try {
            execute(new DrainTask(turn, this, cq, done));
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * Waits for {@code f} by polling {@code cq} on the calling thread ({@code ibv_poll_cq}) and dispatching its
     * completions here as the engine would, instead of sleeping until the engine's thread completes {@code f}:
     * no wake-up and no hand-off between threads, for one core spinning while it waits (busy polling by the
     * waiter, as a C program polls its own CQ). Meanwhile the engine leaves {@code cq} to its waiters: it neither
     * polls nor arms it, so its completions raise no event and wake nobody. For a millisecond after the engine first
     * sees the last waiter gone (the next one usually comes sooner) it stays unarmed, and the engine looks at it
     * after 1 ms, then 2, 4 and every 8 ms while waiters keep coming back (each look wakes the engine's thread); then
     * the engine arms it again ({@code ibv_req_notify_cq}): what completes while nobody waits is dispatched by the
     * engine, at most about 8 ms late while waiters come and go. Completions are dispatched in the order
     * polled, by one poller at a time; their
     * futures complete on this thread, where their continuations run as on the engine's thread (they must not
     * block: the blocking calls refuse to). Returns early, {@code false}, when polling here cannot go on (the
     * queue or engine closed or broken), and at once on a virtual thread (spinning would hold its carrier from the
     * other virtual threads): the engine then completes {@code f} as usual.
     *
     * @param cq           a completion queue of this engine's, without a {@link CompletionHandler}
     * @param f            what the caller waits for (a future of a request on {@code cq}'s queue pairs)
     * @param timeoutNanos the longest wait
     * @return true once {@code f} is done; false at the deadline, or when polling here ended early or could not
     *         begin (a virtual thread)
     * @throws InterruptedException     if the thread is interrupted ({@code f} is left as it is)
     * @throws IllegalArgumentException if this engine does not drive {@code cq}, or a handler takes its
     *                                  completions (dispatched in place on the engine's thread only)
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean pollWhileWaiting(CompletionQueue cq, java.util.concurrent.Future<?> f, long timeoutNanos)
            throws InterruptedException {
        java.util.Objects.requireNonNull(f, "f");
        return waits.pollWhileWaiting(cq, f, null, timeoutNanos);
    }

    /**
     * {@link #pollWhileWaiting(CompletionQueue, java.util.concurrent.Future, long)} until {@code done} says so,
     * for a caller that waits for its own state (a message in its inbox, say) rather than a future: nothing is
     * allocated per wait. {@code done} is asked after each poll; it must be cheap and must not block.
     *
     * @param cq           a completion queue of this engine's, without a {@link CompletionHandler}
     * @param done         true once the caller's wait is over
     * @param timeoutNanos the longest wait
     * @return true once {@code done}; false at the deadline, or when polling here ended early or could not begin (a
     *         virtual thread): false is not a timeout, the caller goes on with its usual wait
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}, or a handler takes its
     *                                  completions
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean pollWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos)
            throws InterruptedException {
        java.util.Objects.requireNonNull(done, "done");
        return waits.pollWhileWaiting(cq, null, done, timeoutNanos);
    }

    /**
     * How many completions callers waiting in {@link #pollWhileWaiting} or {@link #blockWhileWaiting} polled and
     * dispatched on their own threads (the rest were the engine thread's): how much of the work waiters took over.
     *
     * @return the count since the engine was built
     */
    public long completionsByWaiters() {
        return waits.dispatched();
    }

    /**
     * How many completion events callers sleeping in {@link #blockWhileWaiting} took (each woke one, or came with
     * one wake-up): with solicited sends, one a message received rather than one for each completion.
     *
     * @return the count since the engine was built
     */
    public long waiterWakeUps() {
        return waits.wakeUps();
    }

    /**
     * Waits on this thread until {@code done} says so, asleep in the kernel on {@code cq}'s own completion channel
     * and dispatching its completions here: {@code poll(2)} on the channel, {@code ibv_get_cq_event},
     * {@code ibv_poll_cq}, {@code ibv_req_notify_cq} when it is empty, as a C program's event loop does, with no
     * hand-off from the engine's thread (in a ping-pong that hand-off, a wake-up of the engine and then of the
     * waiter, costs more than the rest of the round trip's software). For a blocking call of a connection that
     * waits for its own state (a message in its inbox, a send's buffer), in {@link PollingMode#EVENT} mode.
     *
     * <p>The engine lends the channel: the first such wait takes it out of the engine's epoll set, and the engine,
     * which then looks at the queue every 1 to 8 ms, takes it back about a millisecond after its first look
     * without waiters (completions that come between waits are dispatched by the next wait, or at that look). One
     * caller waits here at a time; the sleep is cut into slices of at most 50 ms, between which an interrupt, a close
     * of the queue or of the engine is noticed. Nothing is allocated per wait.
     *
     * @param cq           a completion queue of this engine's made by {@link #createCompletionQueueWithOwnChannel}
     * @param done         true once the caller's wait is over; asked after each poll, it must be cheap and must not
     *                     block
     * @param timeoutNanos the longest wait, counted from the first look that found nothing to dispatch (the clock
     *                     is read only once the caller would sleep: a wait that ends at its first look reads none)
     * @return true once {@code done}; false at the deadline, or at once or later when waiting here cannot go on:
     *         the engine is not in event mode, the queue has no channel of its own or is busy-polled, another
     *         caller waits on it, the queue or the engine is closing, or the caller is a virtual thread (asleep in
     *         {@code poll(2)} it would hold its carrier). The caller then waits the usual way (parked).
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean blockWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos)
            throws InterruptedException {
        return blockWhileWaiting(cq, done, timeoutNanos, false);
    }

    /**
     * {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}, woken only by solicited
     * completions when {@code solicitedOnly} ({@code ibv_req_notify_cq(cq, 1)}): for a caller that waits for a
     * message its peer sends with {@code IBV_SEND_SOLICITED}, so that the completions of its own sends (polled with
     * the next message) do not wake it: one wake-up a message instead of two. A failure wakes it too (a broken
     * connection flushes its receives, and a flushed receive counts as solicited). Only when nothing else is
     * awaited: a request with a future posted meanwhile ({@link #expect}) re-arms the queue for every completion.
     *
     * @param cq            see {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}
     * @param done          true once the caller's wait is over
     * @param timeoutNanos  the longest wait
     * @param solicitedOnly whether only solicited completions (and failures) wake the caller
     * @return as {@link #blockWhileWaiting(CompletionQueue, java.util.function.BooleanSupplier, long)}
     * @throws InterruptedException     if the thread is interrupted
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    on the engine's thread (it would wait for itself)
     */
    public boolean blockWhileWaiting(CompletionQueue cq, java.util.function.BooleanSupplier done, long timeoutNanos,
            boolean solicitedOnly) throws InterruptedException {
        java.util.Objects.requireNonNull(done, "done");
        return waits.blockWhileWaiting(cq, done, timeoutNanos, solicitedOnly);
    }

    /** The engine's record of {@code cq}, for {@link #expect(DrivenQueue)}; null if it does not drive it. */
    DrivenQueue home(CompletionQueue cq) {
        return turn.home(cq);
    }

    /**
     * Tells the engine that a future or a handler, not a caller in {@link #blockWhileWaiting}, expects a completion
     * of {@code cq}'s (a request about to be posted, or a future about to be waited for): while blocking waiters
     * have borrowed the queue's channel, the engine sees its completions only at its next look, up to
     * 8 ms later. If the channel is lent it takes it back as soon as no caller sleeps on
     * it (a sleeper dispatches every completion meanwhile). {@link AsyncQueuePair}'s future-returning posts do this
     * themselves; a caller of its tagged forms whose completion a future of its own awaits calls it. Costs a
     * volatile read when the channel is not lent.
     *
     * @param cq a completion queue of this engine's (others are ignored)
     */
    public void expect(CompletionQueue cq) {
        waits.expect(turn.home(cq));
    }

    void expect(DrivenQueue d) {
        waits.expect(d);
    }

    /**
     * Runs {@code task} on the engine thread, in submission order with the engine's own work (Netty's
     * {@code execute}); with this an engine is an {@link java.util.concurrent.Executor} for continuations
     * ({@code future.thenApplyAsync(fn, engine)}). The task must not block. A task that throws a
     * {@code RuntimeException} is logged and counted ({@link #callbackFailures()}); the engine goes on.
     *
     * @param task what to run
     * @throws RejectedExecutionException once {@link #close()} has begun or the engine thread has died
     */
    @Override
    public void execute(Runnable task) {
        runner.execute(task);
    }

    /** Runs {@code task} on the engine thread and waits for it (inline when already on it). */
    void call(Runnable task) {
        runner.call(task);
    }

    /**
     * How many callbacks (fallback completion handlers, watched-fd handlers, tasks given to
     * {@link #execute}) threw a {@code RuntimeException}; each was logged and the engine went on (Agrona's
     * error counter). An {@code Error} ends the engine instead ({@link #terminationCause()}).
     *
     * @return the count so far
     */
    public long callbackFailures() {
        return dispatcher.callbackFailures();
    }

    /**
     * The engine's counters so far: turns, completions (by its thread and by waiting callers), failed completions,
     * async events, wake-ups, callbacks that threw. Cheap; does not wait for the engine.
     *
     * @return a snapshot (its numbers may lag the engine's latest turn)
     */
    public EngineCounters counters() {
        return new EngineCounters(turn.turnsDone(), dispatcher.completions(), waits.dispatched(),
                dispatcher.failedCompletions(), asyncEvents, turn.wakeWrites(), waits.wakeUps(), callbackFailures());
    }

    void callbackFailed(String what, RuntimeException e) {
        dispatcher.callbackFailed(what, e);
    }

    /**
     * Whether the engine thread has ended: after {@link #close()}, or when it died of an error
     * ({@link #terminationCause()}). Every pending future of its queue pairs has then been failed.
     *
     * @return {@code true} once the thread has finished
     */
    public boolean isTerminated() {
        return runner.terminated.isDone();
    }

    /**
     * Why the engine thread ended, when it was not {@link #close()}: the error that stopped it (an
     * {@code Error} thrown by a callback, or a failing {@code epoll_wait}). Futures pending then failed
     * with it as their cause, and later posts fail at once with it.
     *
     * @return the cause, or empty while running or after a plain close
     */
    public java.util.Optional<Throwable> terminationCause() {
        return java.util.Optional.ofNullable(runner.terminationCause());
    }

    /** Why posts fail now: closed, or died of an error (with the error). */
    IllegalStateException closedError(Object what) {
        return runner.closedError(what);
    }

    /**
     * Busy-polls {@code cq} in {@link PollingMode#EVENT} mode: the engine polls it on every turn, without waiting for
     * its completion channel, and never sleeps in {@code epoll_wait} while such a CQ exists (one core spins for the
     * lowest latency of that queue; the others keep their events). The poll modes poll every CQ anyway: there it
     * changes nothing.
     *
     * @param cq a completion queue this engine drives
     * @param on whether to busy-poll it
     * @throws IllegalArgumentException if this engine does not drive {@code cq}
     * @throws IllegalStateException    if the engine is closed
     */
    public void busyPoll(CompletionQueue cq, boolean on) {
        runner.ensureOpen();
        boolean[] driven = new boolean[1];
        call(() -> driven[0] = turn.busyPoll(cq, on));
        if (!driven[0]) {
            throw new IllegalArgumentException(cq + " is not driven by this engine");
        }
    }

    /**
     * Stops the engine thread (woken through the eventfd): tasks already queued run, later ones are
     * rejected; the futures of every outstanding request of its queue pairs fail with
     * {@link WorkRequestException} ({@code WR_FLUSH_ERR}) and later posts fail at once; all CQ events are
     * acknowledged; the eventfd and epoll fd close once no wake-up write is in flight; its completion
     * channels close, each as soon as its last CQ is closed (CQs still open are no longer drained).
     * Returns when the thread has finished, except on the engine thread itself (from a callback), where it
     * returns at once and the thread finishes when the callback returns. Idempotent; concurrent callers all
     * wait.
     */
    @Override
    public void close() {
        runner.close();
    }

    /** Builds a {@link CompletionEngine}. */
    public static final class Builder {
        private PollingMode mode = PollingMode.EVENT;
        private Supplier<IdleStrategy> idle;
        private String name = "rdma4j-engine";
        private int pollBatch = 32;
        private boolean external;

        private Builder() {
        }

        /**
         * The polling mode.
         *
         * @param mode EVENT, BUSY_POLL or ADAPTIVE
         * @return this
         */
        public Builder mode(PollingMode mode) {
            this.mode = Objects.requireNonNull(mode);
            return this;
        }

        /**
         * The idle strategy of BUSY_POLL (default: spin) and ADAPTIVE (default: 1000 spins, 100 yields,
         * then epoll).
         *
         * @param idle makes the strategy for the engine thread
         * @return this
         */
        public Builder idleStrategy(Supplier<IdleStrategy> idle) {
            this.idle = idle;
            return this;
        }

        /**
         * The engine thread's name.
         *
         * @param name the name
         * @return this
         */
        public Builder name(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("the engine thread's name must not be null or blank");
            }
            this.name = name;
            return this;
        }

        /**
         * No thread of the engine's own: the caller's event loop drives it with {@link CompletionEngine#runOnce}
         * and wakes it with {@link CompletionEngine#wakeUp()} (e.g. a Netty {@code IoHandler}); the first thread
         * to call {@code runOnce} becomes the engine's thread, and callbacks run there. {@link #name} then names
         * the engine in messages only.
         *
         * @return this
         */
        public Builder externallyDriven() {
            this.external = true;
            return this;
        }

        /**
         * Completions taken per {@code ibv_poll_cq}.
         *
         * @param n at least 1
         * @return this
         */
        public Builder pollBatch(int n) {
            this.pollBatch = n;
            return this;
        }

        /**
         * Starts the engine thread (none when {@linkplain #externallyDriven() externally driven}).
         *
         * @return the running engine
         * @throws VerbsException if epoll or the eventfd cannot be created
         */
        public CompletionEngine build() throws VerbsException {
            if (idle == null) {
                idle = mode == PollingMode.ADAPTIVE ? () -> IdleStrategy.backoff(1000, 100, 1000, 1000)
                        : IdleStrategy::busySpin;
            }
            return new CompletionEngine(this);
        }
    }
}
