package dev.rdma4j;

import dev.rdma4j.internal.ffi.WrView;

/**
 * A reusable chain of receive requests ({@code struct ibv_recv_wr} list) that
 * {@link QueuePair#post(ReceiveBatch)} posts in one {@code ibv_post_recv}. On a UD queue pair the
 * first {@link QueuePair#UD_GRH_BYTES} bytes of every receive hold the sender's GRH
 * ({@link GlobalRouteHeader}). A post does not consume the batch: a receive encoded once is reposted as it is
 * (with a new wr_id from {@link #setWrId} if need be). Not thread-safe.
 *
 * <p>After {@link #close()} encoding into the batch and posting it throw {@link IllegalStateException}
 * (ReceiveBatch(n requests) is closed"); such a refused post takes no queue room.
 */
public final class ReceiveBatch extends RequestBatch {
    /**
     * Allocates a batch.
     *
     * @param capacity the most requests one post carries
     * @param maxSge   the most scatter/gather entries per request
     */
    public ReceiveBatch(int capacity, int maxSge) {
        super(capacity, maxSge, 0, WrView.RECV_SIZE);
    }

    /**
     * Empties the batch for reuse.
     *
     * @return this
     */
    public ReceiveBatch clear() {
        count = 0;
        failedIndex = -1;
        return this;
    }

    /**
     * A receive into a range of a region (which needs {@code LOCAL_WRITE}).
     *
     * @param wrId   returned in the completion
     * @param region the destination region
     * @param offset offset in it
     * @param length bytes; a longer message fails with {@code LOC_LEN_ERR}
     * @return this
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
     */
    public ReceiveBatch receive(long wrId, MemoryRegion region, long offset, int length) {
        int i = begin(wrId);
        WrView.recv(wrs, i, sgList(i));
        if (i > 0) {
            WrView.recvNext(wrs, i - 1, wrs.address() + i * WrView.RECV_SIZE);
        }
        try {
            return scatter(region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    @Override
    void unlink(int i) {
        if (i > 0) {
            WrView.recvNext(wrs, i - 1, 0);
        }
    }

    /**
     * Adds a scatter entry to the last receive.
     *
     * @param region the region
     * @param offset offset in it
     * @param length bytes
     * @return this
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
     */
    public ReceiveBatch scatter(MemoryRegion region, long offset, int length) {
        ensureOpen();
        if (count == 0) {
            throw new IllegalStateException("no request in the batch yet");
        }
        int i = count - 1;
        addSge(i, region, offset, length);
        WrView.recvNumSge(wrs, i, sgeCounts[i]);
        return this;
    }

    @Override
    long wrSize() {
        return WrView.RECV_SIZE;
    }

    @Override
    void wrId(int i, long wrId) {
        WrView.recvWrId(wrs, i, wrId);
    }

    @Override
    long wrId(int i) {
        return WrView.recvWrIdOf(wrs, i);
    }

    /** Why a post of this batch to a queue pair's own receive queue was refused with {@code rc}, for the exception. */
    String explainRefusal(int rc, QpCapabilities caps, QpState state) {
        return "request " + failedIndex + " of " + count + (state == QpState.RESET ? " (the QP is still in RESET)"
                : rc == dev.rdma4j.internal.ffi.Libc.ENOMEM ? " (receive queue full: " + caps.maxRecvWr()
                + " outstanding)" : sgeCounts[Math.max(0, failedIndex)] > caps.maxRecvSge()
                ? " has more scatter entries than the QP's " + caps.maxRecvSge() : "");
    }
}
