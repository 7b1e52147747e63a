package dev.rdma4j.tools.pingpong;

import static dev.rdma4j.tools.pingpong.PingpongContext.RECV_WRID;
import static dev.rdma4j.tools.pingpong.PingpongContext.SEND_WRID;

import dev.rdma4j.WcStatus;

/**
 * The C examples' traffic loop: take completions two at a time (busy-polling the CQ, or with {@code -e}
 * sleeping until the completion engine hands them over: {@link PingpongCompletions}); count sends and
 * receives; refill the receive queue to {@code rx_depth} when at most one receive is left; and post
 * the next send once both the previous send and a receive have completed, until {@code iters} of each.
 * The client starts with one send, so the two sides alternate: a ping-pong.
 */
final class PingpongLoop {
    private final PingpongContext pp;
    private final long iters;
    private final int rxDepth;
    private final boolean addParseFailureLine;
    private int routs;
    private long scnt;
    private long rcnt;
    private int pending;

    /**
     * A loop over a connected context whose receive queue holds {@code routs} receives.
     *
     * @param pp                  the context
     * @param iters               exchanges ({@code -n})
     * @param rxDepth             receives to keep posted ({@code -r})
     * @param routs               receives posted now
     * @param addParseFailureLine rc_pingpong adds "parse WC failed N" to a completion's failure; uc and ud do not
     */
    PingpongLoop(PingpongContext pp, long iters, int rxDepth, int routs, boolean addParseFailureLine) {
        this.pp = pp;
        this.iters = iters;
        this.rxDepth = rxDepth;
        this.routs = routs;
        this.addParseFailureLine = addParseFailureLine;
    }

    /**
     * Waits for a receive first; the client ({@code sendFirst}) also posts the first send.
     *
     * @param sendFirst whether this side starts
     * @throws PingpongException "Couldn't post send"
     */
    void start(boolean sendFirst) throws PingpongException {
        pending = RECV_WRID;
        if (sendFirst) {
            postSend();
            pending |= SEND_WRID;
        }
    }

    /**
     * Runs until {@code iters} sends and receives have completed.
     *
     * @throws PingpongException with the C tool's messages on a failed completion or post
     */
    void run() throws PingpongException {
        PingpongCompletions wc = pp.completions();
        while (rcnt < iters || scnt < iters) {
            int ne = wc.await();
            for (int i = 0; i < ne; i++) {
                try {
                    complete(wc.wrId[i], wc.status[i]);
                } catch (PingpongException e) {
                    throw addParseFailureLine ? e.then("parse WC failed " + ne) : e;
                }
            }
        }
    }

    private void complete(long id, WcStatus status) throws PingpongException {
        int wrId = (int) id;
        if (status != WcStatus.SUCCESS) {
            throw new PingpongException("Failed status " + status.text() + " (" + status.code() + ") for wr_id "
                    + wrId);
        }
        switch (wrId) {
            case SEND_WRID -> scnt++;
            case RECV_WRID -> {
                if (--routs <= 1) {
                    routs += pp.postReceives(rxDepth - routs);
                    if (routs < rxDepth) {
                        throw new PingpongException("Couldn't post receive (" + routs + ")");
                    }
                }
                rcnt++;
            }
            default -> throw new PingpongException("Completion for unknown wr_id " + wrId);
        }
        pending &= ~wrId;
        if (scnt < iters && pending == 0) {
            postSend();
            pending = RECV_WRID | SEND_WRID;
        }
    }

    private void postSend() throws PingpongException {
        if (pp.postSend() != 0) {
            throw new PingpongException("Couldn't post send");
        }
    }
}
