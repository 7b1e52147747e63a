package dev.rdma4j.tools.perf;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionView;
import dev.rdma4j.engine.PollingMode;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Where the measuring thread takes its completions from, without allocating:
 * <ul>
 * <li>by default it busy-polls the CQ itself ({@link CompletionQueue#poll} into a reused {@link WorkCompletions});
 * <li>with {@code -e} or {@code --mode} a {@link CompletionEngine} in that mode drives the CQ, and its thread
 *     hands each completion over through a single-producer ring of primitives; the measuring thread spins on
 *     it ({@code busy}), spins then parks ({@code adaptive}), or parks until the engine thread unparks it
 *     ({@code event}).
 * </ul>
 * {@link #poll()} fills {@link #wrId}, {@link #receive} and {@link #status}; a failed completion throws.
 */
abstract sealed class PerfCompletions implements AutoCloseable {
    /** The wr_ids of the completions {@link #poll()} returned. */
    final long[] wrId;
    /** Whether each was a receive. */
    final boolean[] receive;

    PerfCompletions(int max) {
        wrId = new long[max];
        receive = new boolean[max];
    }

    /**
     * Opens the CQ and its consumer.
     *
     * @param ctx     the context
     * @param entries the CQ's size (the most completions outstanding)
     * @param mode    {@code null} to busy-poll, else the engine's mode
     * @return the completions
     * @throws VerbsException if the CQ or the engine cannot be created
     */
    static PerfCompletions open(Context ctx, int entries, PollingMode mode) throws VerbsException {
        int max = 32;
        if (mode == null) {
            return new Direct(ctx.createCompletionQueue(entries), max);
        }
        CompletionEngine engine = CompletionEngine.builder().mode(mode).name("perf-completions").build();
        try {
            return new Engine(engine, ctx, entries, mode, max);
        } catch (VerbsException | RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    /**
     * The CQ, for the QPs.
     *
     * @return the CQ
     */
    abstract CompletionQueue queue();

    /**
     * The next completions, or none yet: never blocks for long (in event mode it may park up to a millisecond).
     *
     * @return how many, in the arrays
     * @throws PerfException for a failed completion or a failed poll
     */
    abstract int poll() throws PerfException;

    /**
     * Like {@link #poll()}, never waiting: for loops that poll memory too.
     *
     * @return how many
     * @throws PerfException for a failed completion or a failed poll
     */
    abstract int pollNow() throws PerfException;

    @Override
    public abstract void close();

    /** Takes completions on the engine thread (see {@link Engine#switchTo}); must not block. */
    interface OnEngine {
        /**
         * One completion.
         *
         * @param wrId    its wr_id
         * @param receive whether it is a receive's
         * @param status  its status
         */
        void completion(long wrId, boolean receive, WcStatus status);
    }

    static PerfException failed(WcStatus status, long wrId, boolean receive) {
        return new PerfException("completion with error: " + status + " (" + (receive ? "receive" : "send")
                + ", wr_id " + wrId + ")");
    }

    /** Busy-polling the CQ in the measuring thread. */
    static final class Direct extends PerfCompletions {
        private final CompletionQueue cq;
        private final WorkCompletions wcs;

        Direct(CompletionQueue cq, int max) {
            super(max);
            this.cq = cq;
            this.wcs = new WorkCompletions(max);
        }

        @Override
        CompletionQueue queue() {
            return cq;
        }

        @Override
        int poll() throws PerfException {
            return pollNow();
        }

        @Override
        int pollNow() throws PerfException {
            int n;
            try {
                n = cq.poll(wcs);
            } catch (VerbsException e) {
                throw new PerfException("poll CQ failed", e);
            }
            if (n > 0) {
                take(n);
            }
            return n;
        }

        /**
         * The {@code n} completions polled, into the arrays: a method of its own, called only when a poll found some
         * (a busy poller's polls are nearly all empty, and C2 then inlined none of this loop's calls in the poll's
         * method: "low call site frequency"), as an informed Java user's poll loop would be written.
         */
        private void take(int n) throws PerfException {
            for (int i = 0; i < n; i++) {
                if (!wcs.isSuccess(i)) {
                    throw failed(wcs.status(i), wcs.wrId(i), wcs.isReceive(i));
                }
                wrId[i] = wcs.wrId(i);
                receive[i] = wcs.isReceive(i);
            }
        }

        @Override
        public void close() {
            cq.close();
            wcs.close();
        }
    }

    /** A completion engine's thread drives the CQ and hands completions over through a ring. */
    static final class Engine extends PerfCompletions {
        private static final int SPINS = 10_000;
        private static final long PARK_NS = 1_000_000;
        private final CompletionEngine engine;
        private final CompletionQueue cq;
        private final PollingMode mode;
        private final int mask;
        private final long[] ringWrId;
        private final boolean[] ringReceive;
        private final WcStatus[] ringStatus;
        /** Written by the engine thread only. */
        private final AtomicLong tail = new AtomicLong();
        /** Read and written by the measuring thread only. */
        private long head;
        private int idle;
        private volatile Thread parked;
        /** While set, the engine thread hands its completions to it instead of the ring. */
        private volatile OnEngine onEngine;

        Engine(CompletionEngine engine, Context ctx, int entries, PollingMode mode, int max) throws VerbsException {
            super(max);
            this.engine = engine;
            this.mode = mode;
            int size = Integer.highestOneBit(Math.max(64, entries) * 2 - 1) << 1;
            this.mask = size - 1;
            this.ringWrId = new long[size];
            this.ringReceive = new boolean[size];
            this.ringStatus = new WcStatus[size];
            this.cq = engine.createCompletionQueueWithHandler(ctx, entries, this::deliver);
        }

        /** On the engine thread: the CQ holds at most {@code entries} completions, the ring twice that. */
        private void deliver(CompletionView wc) {
            OnEngine consumer = onEngine;
            if (consumer != null) {
                consumer.completion(wc.wrId(), wc.isReceive(), wc.status());
                return;
            }
            long t = tail.get();
            int i = (int) (t & mask);
            ringWrId[i] = wc.wrId();
            ringReceive[i] = wc.isReceive();
            ringStatus[i] = wc.status();
            tail.lazySet(t + 1);
            Thread waiter = parked;
            if (waiter != null) {
                LockSupport.unpark(waiter);
            }
        }

        @Override
        CompletionQueue queue() {
            return cq;
        }

        /**
         * On the engine thread: from now on its completions go to {@code consumer}, beginning with those the
         * ring still holds (the measuring thread is not polling meanwhile).
         */
        void switchTo(OnEngine consumer) {
            for (long t = tail.get(); head < t; head++) {
                int i = (int) (head & mask);
                consumer.completion(ringWrId[i], ringReceive[i], ringStatus[i]);
            }
            onEngine = consumer;
        }

        /** Completions go to the ring again; between runs, when none is due. */
        void ringAgain() {
            onEngine = null;
        }

        /** Runs {@code task} on the engine thread ({@link CompletionEngine#execute}). */
        void execute(Runnable task) {
            engine.execute(task);
        }

        /** Throws if the engine ended. */
        void checkAlive() throws PerfException {
            if (engine.isTerminated()) {
                throw new PerfException("the completion engine ended: " + engine.terminationCause().orElse(null));
            }
        }

        @Override
        int poll() throws PerfException {
            int n = pollNow();
            if (n > 0) {
                idle = 0;
                return n;
            }
            if (engine.isTerminated()) {
                throw new PerfException("the completion engine ended: " + engine.terminationCause().orElse(null));
            }
            switch (mode) {
                case BUSY_POLL -> Thread.onSpinWait();
                case ADAPTIVE -> {
                    if (++idle < SPINS) {
                        Thread.onSpinWait();
                    } else if (idle < SPINS + 100) {
                        Thread.yield();
                    } else {
                        park();
                    }
                }
                case EVENT -> park();
            }
            return pollNow();
        }

        private void park() {
            parked = Thread.currentThread();
            if (tail.get() == head) {
                LockSupport.parkNanos(PARK_NS);
            }
            parked = null;
        }

        @Override
        int pollNow() throws PerfException {
            long t = tail.get();
            int n = (int) Math.min(t - head, wrId.length);
            for (int k = 0; k < n; k++) {
                int i = (int) ((head + k) & mask);
                if (ringStatus[i] != WcStatus.SUCCESS) {
                    throw failed(ringStatus[i], ringWrId[i], ringReceive[i]);
                }
                wrId[k] = ringWrId[i];
                receive[k] = ringReceive[i];
            }
            head += n;
            return n;
        }

        @Override
        public void close() {
            try {
                cq.close();
            } finally {
                engine.close();
            }
        }
    }
}
