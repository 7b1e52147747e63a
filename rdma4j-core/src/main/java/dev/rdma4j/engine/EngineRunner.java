package dev.rdma4j.engine;

import dev.rdma4j.internal.EngineThreads;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What runs a {@link CompletionEngine}'s turns (Agrona's {@code AgentRunner}, Netty's event loop around its
 * {@code IoHandler}): the thread the engine's work runs on, the task queue, the close and the termination.
 * {@link OwnThread} starts a platform thread of the engine's own that turns until the close;
 * {@link CallersLoop} has none: the caller's loop turns it ({@link CompletionEngine#runOnce}), and the first thread
 * that does becomes the engine's thread.
 *
 * <p>Threading: {@link #execute}, {@link #call}, {@link #close} and the queries are thread-safe; the turns and the
 * shut-down run on the engine's thread.
 */
abstract sealed class EngineRunner implements EngineTurn.Tasks permits EngineRunner.OwnThread, EngineRunner.CallersLoop {
    private static final System.Logger LOG = System.getLogger("dev.rdma4j.engine");

    final String name;
    /** The engine's thread: its own, or (the caller's loop) the first to turn it; null until then. */
    volatile Thread thread;
    EngineTurn turn; // set by start, before anything runs
    private final Runnable lastly;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private volatile Throwable terminationCause;
    /** {@link #shutDown()} has run (the caller's loop: whichever turn or close came first). Engine thread. */
    boolean shutDownDone;

    /** @param lastly runs at the end of the shut-down, after the fds closed (the shared channels' close) */
    EngineRunner(String name, Runnable lastly) {
        this.name = name;
        this.lastly = lastly;
    }

    /** Starts running {@code turn} (its own thread starts here). */
    abstract void start(EngineTurn turn);

    /** Waits for the shut-down where this kind of runner can: see {@link CompletionEngine#close()}. */
    abstract void finishClose();

    @Override
    public int runTasks() {
        int n = 0;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            r.run();
            n++;
        }
        return n;
    }

    @Override
    public boolean hasTasks() {
        return !tasks.isEmpty();
    }

    boolean isClosed() {
        return closed.get();
    }

    boolean inEngineThread() {
        return Thread.currentThread() == thread;
    }

    Throwable terminationCause() {
        return terminationCause;
    }

    /** {@link CompletionEngine#execute}: a task that throws is counted, and the engine goes on. */
    void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        enqueue(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                turn.callbackFailed("a task given to execute()", e);
            }
        });
    }

    /** Queues {@code task} and wakes the thread; a task the closing engine will not run is taken back. */
    private void enqueue(Runnable task) {
        if (closed.get()) {
            throw rejected();
        }
        tasks.add(task);
        // close() may have begun after the check: the engine thread's last runTasks comes after closed is set,
        // so either it takes the task (and runs it) or we take it back here; never neither
        if (closed.get() && tasks.remove(task)) {
            throw rejected();
        }
        turn.wake();
    }

    private RejectedExecutionException rejected() {
        Throwable cause = terminationCause;
        RejectedExecutionException e = new RejectedExecutionException("CompletionEngine " + name
                + (cause != null ? " died: " + cause : " is closed"));
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** Runs {@code task} on the engine thread and waits for it (inline when already on it). */
    void call(Runnable task) {
        Thread bound = thread;
        if (Thread.currentThread() == bound) {
            task.run();
            return;
        }
        if (bound == null && !closed.get()) { // the caller's loop, never turned: waiting could last forever
            throw new IllegalStateException("CompletionEngine " + name + " is externally driven and no loop has"
                    + " called runOnce yet: nothing would run this call");
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            enqueue(() -> {
                try {
                    task.run();
                    done.complete(null);
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException closing) {
            // the close began after the caller's check: the same exception as a call after the close (issue 29)
            ensureOpen();
            throw closing; // not reached: rejected only once closed
        }
        try {
            done.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    void ensureOpen() {
        if (closed.get()) {
            Throwable cause = terminationCause;
            throw new IllegalStateException("CompletionEngine " + name
                    + (cause != null ? " died: " + cause : " is closed"), cause);
        }
    }

    /** Why posts fail now: closed, or died of an error (with the error). */
    IllegalStateException closedError(Object what) {
        Throwable cause = terminationCause;
        return new IllegalStateException("the completion engine of " + what + (cause != null ? " died (" + cause
                + ")" : " is closed") + ": nothing would complete the future", cause);
    }

    /** {@link CompletionEngine#close()}: no more tasks, the turns stop, then the shut-down. */
    void close() {
        if (closed.compareAndSet(false, true)) {
            turn.stop();
            turn.wake();
        }
        finishClose();
    }

    /** A turn threw: the engine dies of it. */
    void died(Throwable t) {
        terminationCause = t;
        closed.set(true);
        LOG.log(System.Logger.Level.ERROR, "completion engine " + name + " stopped by an error", t);
    }

    /**
     * The engine thread's last act. Order matters: tasks queued before the close run (their callers wait);
     * pending futures fail; CQ events are acknowledged (ibv_destroy_cq waits for that); in-flight wake-up
     * writes finish before the eventfd is closed (Netty's cleanup); then the fds and native memory go.
     */
    void shutDown() {
        if (shutDownDone) {
            return;
        }
        shutDownDone = true;
        turn.stop();
        try {
            runTasks();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "a task failed while " + name + " closed", t);
        }
        Throwable cause = terminationCause;
        turn.failAll(cause != null ? "completion engine died: " + cause : "completion engine closed", cause);
        turn.closeQueues();
        turn.closeFds();
        lastly.run();
        terminated.complete(null);
    }

    /** A platform thread of the engine's own turns until the close. */
    static final class OwnThread extends EngineRunner {
        OwnThread(String name, Runnable lastly) {
            super(name, lastly);
        }

        @Override
        void start(EngineTurn turn) {
            this.turn = turn;
            Thread t = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
            this.thread = t;
            turn.bind(t);
            try {
                t.start();
            } catch (RuntimeException | Error e) { // no thread (e.g. out of memory): give the fds back
                turn.closeFds();
                throw e;
            }
        }

        private void run() {
            EngineThreads.markCurrent(name);
            try {
                while (turn.running()) {
                    turn.turn(-1);
                }
            } catch (Throwable t) {
                died(t);
            } finally {
                shutDown();
            }
        }

        @Override
        void finishClose() {
            if (!inEngineThread()) {
                terminated.join();
            }
        }
    }

    /** No thread of its own: the caller's loop turns it ({@link CompletionEngine#runOnce}). */
    static final class CallersLoop extends EngineRunner {
        /** A turn is under way on the engine's thread (a close from a callback leaves it to the turn). */
        private boolean inTurn;

        CallersLoop(String name, Runnable lastly) {
            super(name, lastly);
        }

        @Override
        void start(EngineTurn turn) {
            this.turn = turn; // bound to the first thread that calls runOnce
        }

        /** {@link CompletionEngine#runOnce}. */
        int runOnce(int timeoutMillis) {
            if (timeoutMillis < -1) {
                throw new IllegalArgumentException("timeoutMillis must be -1, 0 or positive: " + timeoutMillis);
            }
            if (thread != Thread.currentThread()) { // bound once; no lock on later turns
                bindToCurrentThread();
            }
            if (shutDownDone) {
                return 0;
            }
            try {
                inTurn = true;
                int done;
                try {
                    done = turn.running() ? turn.turn(timeoutMillis) : 0;
                } finally {
                    inTurn = false;
                }
                if (!turn.running()) {
                    shutDown();
                }
                return done;
            } catch (Throwable t) {
                died(t);
                shutDown();
                if (t instanceof Error e) {
                    throw e;
                }
                return 0;
            }
        }

        /** The first caller becomes the engine's thread; any other caller later is refused. */
        private synchronized void bindToCurrentThread() {
            Thread me = Thread.currentThread();
            if (thread == null) {
                thread = me;
                turn.bind(me);
                EngineThreads.markCurrent(name);
            } else if (thread != me) {
                throw new IllegalStateException("CompletionEngine " + name + " is driven by thread "
                        + thread.getName() + ", not " + me.getName());
            }
        }

        /**
         * On its thread (or when no thread has driven it yet) the shut-down runs now; on another thread it is left
         * to the driving loop's next {@link #runOnce}, and this returns at once (waiting could hang: nothing obliges
         * that loop to turn again).
         */
        @Override
        void finishClose() {
            synchronized (this) {
                if (thread == null) {
                    thread = Thread.currentThread(); // never driven: this thread finishes it, and no one drives it after
                    turn.bind(thread);
                }
            }
            if (thread == Thread.currentThread() && !shutDownDone && !inTurn) { // in a turn: it shuts down at its end
                shutDown();
            }
        }
    }
}
