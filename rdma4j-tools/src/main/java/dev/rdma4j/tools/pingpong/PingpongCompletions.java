package dev.rdma4j.tools.pingpong;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The pingpong examples' CQ and how their main loop waits on it.
 * <ul>
 * <li>Polling (the default): a plain CQ, busy-polled by the main thread ({@code ibv_poll_cq} until it
 *     returns something).
 * <li>Events ({@code -e}): where the C tools create a completion channel and loop over
 *     {@code ibv_get_cq_event}, {@code ibv_ack_cq_events}, {@code ibv_req_notify_cq} and
 *     {@code ibv_poll_cq}, the CQ here belongs to a {@link CompletionEngine} in
 *     {@link PollingMode#EVENT}: its thread arms the CQ, sleeps in {@code epoll_wait} on the channel,
 *     takes and acknowledges the events, drains the CQ, re-arms and drains again, and hands every
 *     completion (the tools post with their own wr_ids) to a queue the main thread blocks on.
 * </ul>
 * {@link #await()} gives the main loop the next completions, at most {@code max} at a time, in the
 * arrays {@link #wrId}, {@link #status} and {@link #qpNumber}.
 */
final class PingpongCompletions implements AutoCloseable {
    /** The wr_ids of the completions {@link #await()} returned. */
    final long[] wrId;
    /** Their statuses. */
    final WcStatus[] status;
    /** Their local QP numbers. */
    final int[] qpNumber;

    private final CompletionEngine engine;
    private final CompletionQueue cq;
    private final BlockingQueue<WorkCompletion> delivered;
    private final List<WorkCompletion> taken;
    private final WorkCompletions polled;

    private PingpongCompletions(CompletionEngine engine, CompletionQueue cq, BlockingQueue<WorkCompletion> delivered,
            int max) {
        this.engine = engine;
        this.cq = cq;
        this.delivered = delivered;
        this.wrId = new long[max];
        this.status = new WcStatus[max];
        this.qpNumber = new int[max];
        this.taken = engine == null ? null : new ArrayList<>(max);
        this.polled = engine == null ? new WorkCompletions(max) : null;
    }

    /**
     * Creates the CQ ({@code ibv_create_cq}, with {@code ibv_create_comp_channel} first for events).
     *
     * @param context the device context
     * @param entries the CQ's size
     * @param max     the most completions one {@link #await()} returns (what the C code passes to
     *                {@code ibv_poll_cq})
     * @param events  {@code -e}
     * @return the completions
     * @throws PingpongException "Couldn't create completion channel" or "Couldn't create CQ"
     */
    static PingpongCompletions open(Context context, int entries, int max, boolean events) throws PingpongException {
        if (!events) {
            CompletionQueue cq;
            try {
                cq = context.createCompletionQueue(entries);
            } catch (VerbsException | RuntimeException e) {
                throw new PingpongException("Couldn't create CQ", e);
            }
            return new PingpongCompletions(null, cq, null, max);
        }
        CompletionEngine engine;
        try {
            engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("pingpong-events").build();
        } catch (VerbsException | RuntimeException e) {
            throw new PingpongException("Couldn't create completion channel", e);
        }
        BlockingQueue<WorkCompletion> delivered = new LinkedBlockingQueue<>();
        CompletionQueue cq;
        try {
            cq = engine.createCompletionQueue(context, entries, delivered::add);
        } catch (VerbsException | RuntimeException e) {
            engine.close();
            throw new PingpongException("Couldn't create CQ", e);
        }
        return new PingpongCompletions(engine, cq, delivered, max);
    }

    /**
     * The CQ, for the QPs.
     *
     * @return the CQ
     */
    CompletionQueue queue() {
        return cq;
    }

    /**
     * Waits for completions: busy-polls without events, blocks on the engine's hand-over with them.
     *
     * @return how many (at least 1), in the arrays
     * @throws PingpongException "poll CQ failed", or when interrupted
     */
    int await() throws PingpongException {
        if (engine == null) {
            int ne;
            try {
                do {
                    ne = cq.poll(polled);
                } while (ne < 1);
            } catch (VerbsException e) {
                throw new PingpongException("poll CQ failed " + -e.errno(), e);
            }
            for (int i = 0; i < ne; i++) {
                wrId[i] = polled.wrId(i);
                status[i] = polled.status(i);
                qpNumber[i] = polled.qpNumber(i);
            }
            return ne;
        }
        taken.clear();
        try {
            taken.add(delivered.take());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PingpongException("Failed to get cq_event", e);
        }
        delivered.drainTo(taken, wrId.length - 1);
        for (int i = 0; i < taken.size(); i++) {
            WorkCompletion wc = taken.get(i);
            wrId[i] = wc.wrId();
            status[i] = wc.status();
            qpNumber[i] = wc.qpNumber();
        }
        return taken.size();
    }

    /**
     * Destroys the CQ, then stops the engine (which acknowledges the CQ's events and destroys the
     * completion channel); the QPs on the CQ must be gone.
     *
     * @throws PingpongException "Couldn't destroy CQ"
     */
    void closeReporting() throws PingpongException {
        try {
            cq.close();
        } catch (RuntimeException e) {
            close();
            throw new PingpongException("Couldn't destroy CQ", e);
        }
        close();
    }

    /** Destroys whatever is left, reporting nothing. */
    @Override
    public void close() {
        try {
            cq.close();
        } catch (RuntimeException e) {
            // already failing, or already reported
        }
        if (engine != null) {
            engine.close();
        }
        if (polled != null) {
            polled.close();
        }
    }
}
