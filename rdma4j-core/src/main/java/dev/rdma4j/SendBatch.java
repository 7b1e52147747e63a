package dev.rdma4j;

import static dev.rdma4j.internal.ffi.WrView.SEND_FENCE;
import static dev.rdma4j.internal.ffi.WrView.SEND_INLINE;
import static dev.rdma4j.internal.ffi.WrView.SEND_SIGNALED;
import static dev.rdma4j.internal.ffi.WrView.SEND_SOLICITED;

import dev.rdma4j.internal.ffi.WrView;

/**
 * A reusable chain of send-queue work requests ({@code struct ibv_send_wr} list) that
 * {@link QueuePair#post(SendBatch)} posts in one {@code ibv_post_send}. Encoding writes native
 * memory directly; after {@link #clear()} the same batch is filled again without allocating.
 *
 * <p>Each method adds one request with one scatter/gather entry (a bounds-checked range of a
 * registered region); {@link #gather} adds more entries to the last request, and the flag methods
 * modify the last request. Requests are signaled unless {@link #unsignaled()} is called.
 * Not thread-safe.
 */
public final class SendBatch extends RequestBatch {
    /**
     * Allocates a batch.
     *
     * @param capacity the most requests one post carries
     * @param maxSge   the most scatter/gather entries per request
     */
    public SendBatch(int capacity, int maxSge) {
        super(capacity, maxSge, 1, WrView.SEND_SIZE);
        this.addressed = new boolean[capacity];
    }

    /** Whether request i carries an address handle ({@link #sendTo}), which UD sends need and only they take. */
    private final boolean[] addressed;

    /**
     * Empties the batch for reuse.
     *
     * @return this
     */
    public SendBatch clear() {
        count = 0;
        failedIndex = -1;
        return this;
    }

    private int start(long wrId, int opcode, int imm) {
        int i = begin(wrId);
        addressed[i] = false;
        WrView.send(wrs, i, sgList(i), opcode, SEND_SIGNALED, imm);
        if (i > 0) {
            WrView.sendNext(wrs, i - 1, wrs.address() + i * WrView.SEND_SIZE);
        }
        return i;
    }

    private SendBatch local(int i, MemoryRegion region, long offset, int length) {
        addSge(i, region, offset, length);
        WrView.sendNumSge(wrs, i, sgeCounts[i]);
        return this;
    }

    private static long remoteAddress(RemoteRegion remote, long remoteOffset, long length) {
        java.util.Objects.checkFromIndexSize(remoteOffset, length, remote.length());
        return remote.address() + remoteOffset;
    }

    /**
     * A send ({@code IBV_WR_SEND}): the peer consumes a receive.
     *
     * @param wrId   returned in the completion
     * @param region the source region
     * @param offset offset in it
     * @param length bytes (0 allowed)
     * @return this
     */
    public SendBatch send(long wrId, MemoryRegion region, long offset, int length) {
        return local(start(wrId, WrView.WR_SEND, 0), region, offset, length);
    }

    /**
     * A send with immediate data ({@code IBV_WR_SEND_WITH_IMM}).
     *
     * @param wrId      returned in the completion
     * @param region    the source region
     * @param offset    offset in it
     * @param length    bytes
     * @param immediate 32 bits delivered in the peer's completion
     * @return this
     */
    public SendBatch sendWithImmediate(long wrId, MemoryRegion region, long offset, int length, int immediate) {
        return local(start(wrId, WrView.WR_SEND_WITH_IMM, immediate), region, offset, length);
    }

    /**
     * A UD send ({@code IBV_WR_SEND} with {@code wr.ud}) to a remote QP through an address handle.
     *
     * @param wrId       returned in the completion
     * @param region     the source region
     * @param offset     offset in it
     * @param length     bytes, at most the path MTU
     * @param ah         the route to the destination
     * @param remoteQpn  the destination QP number
     * @param remoteQkey the destination's Q_Key
     * @return this
     */
    public SendBatch sendTo(long wrId, MemoryRegion region, long offset, int length, AddressHandle ah,
            int remoteQpn, int remoteQkey) {
        int i = start(wrId, WrView.WR_SEND, 0);
        WrView.ud(wrs, i, ah.handle().address(), remoteQpn, remoteQkey);
        addressed[i] = true;
        addRef(i, ah);
        return local(i, region, offset, length);
    }

    /**
     * An RDMA write ({@code IBV_WR_RDMA_WRITE}): local bytes to the peer's region, no receive consumed.
     *
     * @param wrId         returned in the completion
     * @param region       the source region
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it (bounds-checked against its length)
     * @return this
     */
    public SendBatch write(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset) {
        int i = start(wrId, WrView.WR_RDMA_WRITE, 0);
        WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
        return local(i, region, offset, length);
    }

    /**
     * An RDMA write with immediate ({@code IBV_WR_RDMA_WRITE_WITH_IMM}): also consumes a peer receive,
     * whose completion carries {@code immediate}.
     *
     * @param wrId         returned in the completion
     * @param region       the source region
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @param immediate    32 bits for the peer
     * @return this
     */
    public SendBatch writeWithImmediate(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset, int immediate) {
        int i = start(wrId, WrView.WR_RDMA_WRITE_WITH_IMM, immediate);
        WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
        return local(i, region, offset, length);
    }

    /**
     * An RDMA read ({@code IBV_WR_RDMA_READ}): the peer's bytes into the local region (which needs
     * {@code LOCAL_WRITE}).
     *
     * @param wrId         returned in the completion
     * @param region       the destination region
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return this
     */
    public SendBatch read(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset) {
        int i = start(wrId, WrView.WR_RDMA_READ, 0);
        WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
        return local(i, region, offset, length);
    }

    /**
     * An atomic compare-and-swap ({@code IBV_WR_ATOMIC_CMP_AND_SWP}) on 8 aligned remote bytes; the
     * old remote value lands in the 8 local bytes at {@code offset}.
     *
     * @param wrId         returned in the completion
     * @param region       the region receiving the old value
     * @param offset       offset of 8 bytes in it
     * @param remote       the peer's region
     * @param remoteOffset offset of the 8-byte-aligned target in it
     * @param compare      the expected value
     * @param swap         the new value, stored if the old one equals {@code compare}
     * @return this
     */
    public SendBatch compareAndSwap(long wrId, MemoryRegion region, long offset, RemoteRegion remote,
            long remoteOffset, long compare, long swap) {
        int i = start(wrId, WrView.WR_ATOMIC_CMP_AND_SWP, 0);
        WrView.atomic(wrs, i, atomicTarget(remote, remoteOffset), remote.rkey(), compare, swap);
        return local(i, region, offset, 8);
    }

    /**
     * An atomic fetch-and-add ({@code IBV_WR_ATOMIC_FETCH_AND_ADD}) on 8 aligned remote bytes; the old
     * remote value lands in the 8 local bytes at {@code offset}.
     *
     * @param wrId         returned in the completion
     * @param region       the region receiving the old value
     * @param offset       offset of 8 bytes in it
     * @param remote       the peer's region
     * @param remoteOffset offset of the 8-byte-aligned target in it
     * @param add          the value to add
     * @return this
     */
    public SendBatch fetchAndAdd(long wrId, MemoryRegion region, long offset, RemoteRegion remote, long remoteOffset,
            long add) {
        int i = start(wrId, WrView.WR_ATOMIC_FETCH_AND_ADD, 0);
        WrView.atomic(wrs, i, atomicTarget(remote, remoteOffset), remote.rkey(), add, 0);
        return local(i, region, offset, 8);
    }

    private static long atomicTarget(RemoteRegion remote, long remoteOffset) {
        long addr = remoteAddress(remote, remoteOffset, 8);
        if ((addr & 7) != 0) {
            throw new IllegalArgumentException("atomics need an 8-byte aligned remote address: 0x"
                    + Long.toHexString(addr));
        }
        return addr;
    }

    /**
     * Adds a scatter/gather entry to the last request.
     *
     * @param region the region
     * @param offset offset in it
     * @param length bytes
     * @return this
     */
    public SendBatch gather(MemoryRegion region, long offset, int length) {
        int i = last();
        int op = WrView.sendOpcode(wrs, i);
        if (op == WrView.WR_ATOMIC_CMP_AND_SWP || op == WrView.WR_ATOMIC_FETCH_AND_ADD) {
            throw new IllegalArgumentException("atomics take exactly one 8-byte entry");
        }
        return local(i, region, offset, length);
    }

    /**
     * Makes the last request unsignaled: no completion unless it fails (or the QP signals all).
     *
     * @return this
     */
    public SendBatch unsignaled() {
        return flags(0, SEND_SIGNALED);
    }

    /**
     * Marks the last request solicited ({@code IBV_SEND_SOLICITED}): wakes a peer armed for solicited events.
     *
     * @return this
     */
    public SendBatch solicited() {
        return flags(SEND_SOLICITED, 0);
    }

    /**
     * Sends the last request's data inline ({@code IBV_SEND_INLINE}): copied at post time, so the
     * buffer is free again at once; at most the QP's {@code max_inline_data} bytes.
     *
     * @return this
     */
    public SendBatch inline() {
        return flags(SEND_INLINE, 0);
    }

    /**
     * Fences the last request ({@code IBV_SEND_FENCE}): it waits for earlier RDMA reads and atomics.
     *
     * @return this
     */
    public SendBatch fence() {
        return flags(SEND_FENCE, 0);
    }

    /** Whether request {@code i} asks for a completion ({@code IBV_SEND_SIGNALED}). */
    boolean isSignaled(int i) {
        return (WrView.sendFlags(wrs, i) & SEND_SIGNALED) != 0;
    }

    private SendBatch flags(int set, int clear) {
        int i = last();
        WrView.sendFlags(wrs, i, (WrView.sendFlags(wrs, i) | set) & ~clear);
        return this;
    }

    private int last() {
        if (count == 0) {
            throw new IllegalStateException("no request in the batch yet");
        }
        return count - 1;
    }

    /**
     * Why request i cannot go on a queue pair of {@code type}, or null when it can; constant strings, so the
     * post path allocates nothing. A provider given a request its QP type cannot take may crash (rxe reads
     * the missing address handle of a UD send), so the check comes before the post.
     */
    String refusalFor(QpType type, int i) {
        int op = WrView.sendOpcode(wrs, i);
        return switch (type) {
            case UD -> !addressed[i] ? "UD sends need an address handle (SendBatch.sendTo, AsyncQueuePair.sendToAsync)"
                    : op != WrView.WR_SEND && op != WrView.WR_SEND_WITH_IMM
                            ? "UD queue pairs only send: no RDMA read/write or atomics" : null;
            case UC -> addressed[i] ? "an address handle (sendTo) is for UD queue pairs, this one is UC"
                    : op == WrView.WR_RDMA_READ || op == WrView.WR_ATOMIC_CMP_AND_SWP
                            || op == WrView.WR_ATOMIC_FETCH_AND_ADD ? "UC queue pairs have no RDMA read or atomics" : null;
            default -> addressed[i] ? "an address handle (sendTo) is for UD queue pairs, this one is RC" : null;
        };
    }

    boolean isInline(int i) {
        return (WrView.sendFlags(wrs, i) & SEND_INLINE) != 0;
    }

    @Override
    long wrSize() {
        return WrView.SEND_SIZE;
    }

    @Override
    void wrId(int i, long wrId) {
        WrView.sendWrId(wrs, i, wrId);
    }

    @Override
    long wrId(int i) {
        return WrView.sendWrIdOf(wrs, i);
    }
}
