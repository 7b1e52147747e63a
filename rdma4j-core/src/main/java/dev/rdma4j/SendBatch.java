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
 *
 * <p>A post does not consume the batch: posting it again posts the same requests, so a loop that sends the same
 * kind of request encodes it once and reposts it, changing at most its wr_id ({@link #setWrId}), which is the
 * cheapest way to post (perftest's). Not thread-safe.
 *
 * <p>After {@link #close()} encoding into the batch and posting it throw {@link IllegalStateException}; such a
 * refused post takes no queue room.
 */
public final class SendBatch extends RequestBatch {
    /**
     * Allocates a batch.
     *
     * @param capacity the most requests one post carries
     * @param maxSge   the most scatter/gather entries per request
     */
    public SendBatch(int capacity, int maxSge) {
        this(capacity, maxSge, 0);
    }

    /**
     * Allocates a batch with room for inline data: each request can carry up to {@code maxInlineData} bytes
     * copied from any {@link java.lang.foreign.MemorySegment} ({@link #sendInline}, {@link #writeInline}), registered or not.
     * Give it the queue pair's {@code cap.max_inline_data} ({@code qp.capabilities().maxInlineData()}).
     *
     * @param capacity      the most requests one post carries
     * @param maxSge        the most scatter/gather entries per request, at least 1 for inline requests
     * @param maxInlineData bytes of inline room per request (native memory the batch owns; 0 for none)
     * @throws IllegalArgumentException if a value is negative, or the inline room is above 1 MiB
     */
    public SendBatch(int capacity, int maxSge, int maxInlineData) {
        super(capacity, maxSge, 1, WrView.SEND_SIZE, checkInline(maxInlineData));
        this.addressed = new boolean[capacity];
    }

    private static int checkInline(int maxInlineData) {
        if (maxInlineData < 0 || maxInlineData > 1 << 20) {
            throw new IllegalArgumentException("inline room per request must be in 0..1 MiB: " + maxInlineData);
        }
        return maxInlineData;
    }

    /** Whether request i carries an address handle ({@link #sendTo}), which UD sends need and only they take. */
    final boolean[] addressed;

    /**
     * Empties the batch for reuse.
     *
     * @return this
     */
    public SendBatch clear() {
        count = 0;
        failedIndex = -1;
        if (windowOps != 0) {
            extras.clearWindowOps();
            windowOps = 0;
        }
        return this;
    }

    /** The window requests' records and the atomic writes' values: made at the first request that needs them. */
    BatchExtras extras;
    /** How many requests bind or invalidate windows ({@link QueuePair} reads it at each post: one field if none). */
    int windowOps;

    @Override
    void unlink(int i) {
        if (i > 0) {
            WrView.sendNext(wrs, i - 1, 0);
        }
    }

    private int start(long wrId, int opcode, int imm) {
        int i = begin(wrId);
        addressed[i] = false;
        if (windowOps != 0 && extras.forgetWindowOp(i)) { // a window request encoded at this index before: no longer
            windowOps--;
        }
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
        Ranges.checkSlice("remoteOffset", remoteOffset, "length", length, "the remote region", remote.length());
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
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
     */
    public SendBatch send(long wrId, MemoryRegion region, long offset, int length) {
        int i = start(wrId, WrView.WR_SEND, 0);
        try {
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
     */
    public SendBatch sendWithImmediate(long wrId, MemoryRegion region, long offset, int length, int immediate) {
        int i = start(wrId, WrView.WR_SEND_WITH_IMM, immediate);
        try {
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
     */
    public SendBatch sendTo(long wrId, MemoryRegion region, long offset, int length, AddressHandle ah,
            int remoteQpn, int remoteQkey) {
        int i = start(wrId, WrView.WR_SEND, 0);
        try {
            WrView.ud(wrs, i, ah.handle().address(), remoteQpn, remoteQkey);
            addressed[i] = true;
            addRef(i, ah);
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    /**
     * An inline send ({@code IBV_WR_SEND} with {@code IBV_SEND_INLINE}) of {@code data}, which may be any memory:
     * a heap array ({@code MemorySegment.ofArray}), a slice of a confined arena, a region. The bytes are copied
     * into the batch now, and the provider copies them into the send queue at post time, ignoring the lkey, as
     * C allows for inline requests; so nothing is registered or pinned and {@code data} is free again as soon as
     * this returns. The queue pair refuses the post ({@code EINVAL}) when the request has more bytes than its
     * {@code cap.max_inline_data}. Allocation-free.
     *
     * @param wrId returned in the completion
     * @param data the bytes to send
     * @return this
     * @throws IllegalArgumentException if {@code data} is longer than the batch's inline room (the
     *                                  {@code maxInlineData} it was created with; none without it)
     * @throws IllegalStateException    if the batch is full or closed, or {@code data}'s arena is closed
     */
    public SendBatch sendInline(long wrId, java.lang.foreign.MemorySegment data) {
        int length = stage(data);
        int i = start(wrId, WrView.WR_SEND, 0);
        try {
            return inline(i, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    /**
     * An inline RDMA write ({@code IBV_WR_RDMA_WRITE} with {@code IBV_SEND_INLINE}) of {@code data}, which may be
     * any memory: copied as in {@link #sendInline}, nothing registered or pinned.
     *
     * @param wrId         returned in the completion
     * @param data         the bytes to write
     * @param remote       the peer's region
     * @param remoteOffset offset in it (bounds-checked against its length)
     * @return this
     * @throws IllegalArgumentException if {@code data} is longer than the batch's inline room, or
     *                                  {@code remoteOffset} is negative or the bytes do not fit the remote region
     *                                  there (the message names the argument and the values)
     */
    public SendBatch writeInline(long wrId, java.lang.foreign.MemorySegment data, RemoteRegion remote,
            long remoteOffset) {
        long target = remoteAddress(remote, remoteOffset, data.byteSize());
        int length = stage(data);
        int i = start(wrId, WrView.WR_RDMA_WRITE, 0);
        try {
            WrView.rdma(wrs, i, target, remote.rkey());
            return inline(i, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    /** Checks and copies {@code data} into the inline room of the next request, before it is begun. */
    private int stage(java.lang.foreign.MemorySegment data) {
        long length = data.byteSize();
        if (maxSge == 0) {
            throw new IllegalArgumentException("an inline request needs a scatter/gather entry: this batch has maxSge 0");
        }
        if (length > ownBytes) {
            throw new IllegalArgumentException(ownBytes == 0
                    ? "this batch has no inline room: create it with new SendBatch(capacity, maxSge, maxInlineData)"
                    : length + " bytes of inline data do not fit the batch's inline room of " + ownBytes
                            + " bytes per request (the QP's cap.max_inline_data bounds it at post time)");
        }
        ensureRoom();
        java.lang.foreign.MemorySegment.copy(data, 0, own, count * ownBytes, length); // the request begun next
        return (int) length;
    }

    private SendBatch inline(int i, int length) {
        addOwnSge(i, own.address() + i * ownBytes, length);
        WrView.sendNumSge(wrs, i, sgeCounts[i]);
        WrView.sendFlags(wrs, i, WrView.sendFlags(wrs, i) | SEND_INLINE);
        return this;
    }

    /** The bytes request i's first scatter/gather entry points at, when they are the batch's own (tests). */
    byte[] inlineBytes(int i) {
        int s = i * maxSge;
        long offset = WrView.sgeAddr(sges, s) - own.address();
        return own.asSlice(offset, WrView.sgeLength(sges, s)).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
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
     * @throws IllegalArgumentException if {@code offset}, {@code length} or {@code remoteOffset} is negative or the
     *                                  range does not fit its region (the message names the argument and the values);
     *                                  the batch is left as it was
     */
    public SendBatch write(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset) {
        int i = start(wrId, WrView.WR_RDMA_WRITE, 0);
        try {
            WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset}, {@code length} or {@code remoteOffset} is negative or the
     *                                  range does not fit its region (the message names the argument and the values);
     *                                  the batch is left as it was
     */
    public SendBatch writeWithImmediate(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset, int immediate) {
        int i = start(wrId, WrView.WR_RDMA_WRITE_WITH_IMM, immediate);
        try {
            WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset}, {@code length} or {@code remoteOffset} is negative or the
     *                                  range does not fit its region (the message names the argument and the values);
     *                                  the batch is left as it was
     */
    public SendBatch read(long wrId, MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset) {
        int i = start(wrId, WrView.WR_RDMA_READ, 0);
        try {
            WrView.rdma(wrs, i, remoteAddress(remote, remoteOffset, length), remote.rkey());
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset} or {@code remoteOffset} is negative or the range does not
     *                                  fit its region (the message names the argument and the values); the batch is
     *                                  left as it was
     */
    public SendBatch compareAndSwap(long wrId, MemoryRegion region, long offset, RemoteRegion remote,
            long remoteOffset, long compare, long swap) {
        int i = start(wrId, WrView.WR_ATOMIC_CMP_AND_SWP, 0);
        try {
            WrView.atomic(wrs, i, atomicTarget(remote, remoteOffset), remote.rkey(), compare, swap);
            return local(i, region, offset, 8);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * @throws IllegalArgumentException if {@code offset} or {@code remoteOffset} is negative or the range does not
     *                                  fit its region (the message names the argument and the values); the batch is
     *                                  left as it was
     */
    public SendBatch fetchAndAdd(long wrId, MemoryRegion region, long offset, RemoteRegion remote, long remoteOffset,
            long add) {
        int i = start(wrId, WrView.WR_ATOMIC_FETCH_AND_ADD, 0);
        try {
            WrView.atomic(wrs, i, atomicTarget(remote, remoteOffset), remote.rkey(), add, 0);
            return local(i, region, offset, 8);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    /**
     * An atomic write ({@code IBV_WR_ATOMIC_WRITE}) of 8 bytes to 8 aligned remote bytes: the peer sees all of
     * {@code value} or none of it. Posted only through the extended API ({@link QueuePairEx#post}, which calls
     * {@code ibv_wr_atomic_write}); {@link QueuePair#post} refuses it ({@code EINVAL}: rdma-core's
     * {@code ibv_post_send} does not carry it on every provider).
     *
     * @param wrId         returned in the completion
     * @param remote       the peer's region (registered with remote write access)
     * @param remoteOffset offset of the 8-byte-aligned target in it
     * @param value        the 8 bytes
     * @return this
     * @throws IllegalArgumentException if the remote range does not fit or is not aligned; the batch is left as it was
     */
    public SendBatch atomicWrite(long wrId, RemoteRegion remote, long remoteOffset, long value) {
        long target = atomicTarget(remote, remoteOffset);
        int i = start(wrId, WrView.WR_ATOMIC_WRITE, 0);
        try {
            WrView.rdma(wrs, i, target, remote.rkey());
            extras().atomicValue(i, value); // the batch closed meanwhile: the request is undone
            return this;
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
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
     * Binds a type 2 memory window to a range of a region ({@code IBV_WR_BIND_MW}): once the request completes, a
     * peer reaches {@code [offset, offset + length)} of {@code region} through {@link MemoryWindow#remote()}, with
     * {@code access}, and nothing else of the region. The window takes the next key ({@code ibv_inc_rkey}) when the
     * batch is posted; the request pins the window and the region until it completes. The queue pair must be RC or
     * UC, of the window's protection domain, and the window unbound (new, or invalidated since its last bind).
     *
     * @param wrId   returned in the completion ({@code IBV_WC_BIND_MW})
     * @param window a type 2 window
     * @param region registered with {@link AccessFlag#MW_BIND}, in the window's protection domain
     * @param offset where the window starts in the region
     * @param length bytes, positive
     * @param access what the peer may do: {@link AccessFlag#REMOTE_READ}, {@link AccessFlag#REMOTE_WRITE},
     *               {@link AccessFlag#REMOTE_ATOMIC}, and {@link AccessFlag#ZERO_BASED} for addresses from 0
     * @return this
     * @throws IllegalArgumentException if the window is of type 1 ({@link MemoryWindow#bind} binds those), the
     *                                  range does not fit the region, the region lacks {@code MW_BIND} (or
     *                                  {@code LOCAL_WRITE} for remote write or atomic access) or belongs to another
     *                                  protection domain, or {@code access} holds other flags; the batch is left as it
     *                                  was
     * @throws IllegalStateException    if the window, the region or the batch is closed, or the batch is full
     */
    public SendBatch bindWindow(long wrId, MemoryWindow window, MemoryRegion region, long offset, long length,
            java.util.Set<AccessFlag> access) {
        if (window.type() != MemoryWindow.Type.TYPE_2) {
            throw new IllegalArgumentException(window + " is of type 1: bind it with MemoryWindow.bind"
                    + " (ibv_bind_mw); work requests bind type 2 windows");
        }
        int flags = window.checkBind(region, offset, length, access);
        long address = region.address() + offset;
        int i = start(wrId, WrView.WR_BIND_MW, 0);
        try {
            int rkey = MemoryWindow.nextRkey(BatchExtras.keyBefore(this, i, window)); // a bind before it gives its key
            WrView.bindMw(wrs, i, window.handle().address(), rkey, region.handle().address(), address, length, flags);
            addRef(i, window);
            addRef(i, region);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
        extras().recordBind(i, window, region, address, length, access.contains(AccessFlag.ZERO_BASED));
        windowOps++;
        return this;
    }

    /**
     * {@link #bindWindow(long, MemoryWindow, MemoryRegion, long, long, java.util.Set)} with the access as arguments.
     *
     * @param wrId   returned in the completion
     * @param window a type 2 window
     * @param region the region
     * @param offset where the window starts in it
     * @param length bytes
     * @param access what the peer may do
     * @return this
     */
    public SendBatch bindWindow(long wrId, MemoryWindow window, MemoryRegion region, long offset, long length,
            AccessFlag... access) {
        return bindWindow(wrId, window, region, offset, length, java.util.Set.of(access));
    }

    /**
     * Invalidates a type 2 window's binding ({@code IBV_WR_LOCAL_INV} with the window's rkey): once the request
     * completes, a peer's access with the key fails ({@code REM_ACCESS_ERR}) and the window may be bound again.
     * The request pins the window until it completes. The post refuses it ({@code EINVAL}, nothing posted) unless the
     * window is bound on that queue pair: by a bind posted on it (since its last reset, or earlier in the batch) and
     * not invalidated by a request posted since (see {@link MemoryWindow}: rxe's kernel crashes otherwise).
     *
     * @param wrId   returned in the completion ({@code IBV_WC_LOCAL_INV})
     * @param window the window, bound by this side on the queue pair the batch is posted on
     * @return this
     * @throws IllegalArgumentException if the window is of type 1 (bound again or closed, never invalidated)
     * @throws IllegalStateException    if the window or the batch is closed, or the batch is full
     */
    public SendBatch localInvalidate(long wrId, MemoryWindow window) {
        if (window.type() != MemoryWindow.Type.TYPE_2) {
            throw new IllegalArgumentException(window + " is of type 1: a local invalidate unbinds type 2 windows"
                    + " (a type 1 window is bound again, which retires its old key, or closed)");
        }
        window.rkey(); // refused if closed, before the batch changes
        int i = start(wrId, WrView.WR_LOCAL_INV, 0);
        try {
            WrView.invalidateRkey(wrs, i, BatchExtras.keyBefore(this, i, window)); // a bind before it gives its key
            addRef(i, window);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
        extras().recordInvalidate(i, window);
        windowOps++;
        return this;
    }

    /**
     * A send that also invalidates the peer's window {@code window} ({@code IBV_WR_SEND_WITH_INV}): the peer's
     * receive completion carries the key ({@link WorkCompletion#invalidatedRkey()}), and the window is unbound
     * before the peer sees the message: a peer done with a window it was lent gives it back in the same message.
     *
     * @param wrId   returned in the completion
     * @param region the source region
     * @param offset offset in it
     * @param length bytes (0 allowed)
     * @param window the peer's window, as the peer exposed it ({@link MemoryWindow#remote()})
     * @return this
     * @throws IllegalArgumentException if the range does not fit its region; the batch is left as it was
     */
    public SendBatch sendWithInvalidate(long wrId, MemoryRegion region, long offset, int length, RemoteRegion window) {
        int i = start(wrId, WrView.WR_SEND_WITH_INV, 0);
        try {
            WrView.invalidateRkey(wrs, i, window.rkey());
            return local(i, region, offset, length);
        } catch (RuntimeException e) {
            throw undo(i, e);
        }
    }

    private BatchExtras extras() {
        if (extras == null) {
            extras = new BatchExtras(this, capacity);
        }
        return extras;
    }

    /**
     * Adds a scatter/gather entry to the last request.
     *
     * @param region the region
     * @param offset offset in it
     * @param length bytes
     * @return this
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit its
     *                                  region (the message names the argument and the values); the batch is left as
     *                                  it was
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
     * buffer is free again at once; at most the QP's {@code max_inline_data} bytes. For data that is not in a
     * registered region, use {@link #sendInline} or {@link #writeInline}.
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

    /**
     * Addresses the last request, a send ({@link #send}, {@link #sendWithImmediate}, {@link #sendInline}), to a UD
     * destination ({@code wr.ud} of {@code struct ibv_send_wr}), pinning its handle as {@link #sendTo} does: e.g.
     * {@code batch.sendWithImmediate(...).to(peer)}, as rdma-core's {@code udaddy} and {@code mckey} send.
     *
     * @param to the address handle, queue pair number and Q_Key of the destination
     * @return this
     * @throws IllegalArgumentException if the last request is not a send, or is addressed already
     * @throws IllegalStateException    if the batch is empty or closed
     */
    public SendBatch to(UdDestination to) {
        int i = last();
        int op = WrView.sendOpcode(wrs, i);
        if ((op != WrView.WR_SEND && op != WrView.WR_SEND_WITH_IMM) || addressed[i]) {
            throw new IllegalArgumentException(addressed[i] ? "the last request is addressed already"
                    : "only a send or a send with immediate data goes to a UD destination");
        }
        WrView.ud(wrs, i, to.addressHandle().handle().address(), to.qpNumber(), to.qkey());
        addressed[i] = true;
        addRef(i, to.addressHandle());
        return this;
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
        ensureOpen();
        if (count == 0) {
            throw new IllegalStateException("no request in the batch yet");
        }
        return count - 1;
    }

    /** Why a post of this batch was refused with {@code rc}, for the exception: see {@link SendRefusals}. */
    String explainRefusal(int rc, QpCapabilities caps, QpState state, QpType type) {
        return SendRefusals.explain(this, rc, caps, state, type);
    }

    /**
     * Why request i cannot go on a queue pair of {@code type}, or null when it can; constant strings, so the
     * post path allocates nothing. A provider given a request its QP type cannot take may crash (rxe reads
     * the missing address handle of a UD send), so the check comes before the post.
     */
    String refusalFor(QpType type, int i) {
        return refusalFor(type, i, WrView.sendOpcode(wrs, i));
    }

    String refusalFor(QpType type, int i, int op) {
        return switch (type) {
            case UD -> op != WrView.WR_SEND && op != WrView.WR_SEND_WITH_IMM
                    ? "UD queue pairs have no RDMA read or write, nor atomics: they only send (sendTo)"
                    : !addressed[i] ? "UD sends need an address handle (SendBatch.sendTo, AsyncQueuePair.sendToAsync)"
                    : null;
            case UC -> addressed[i] ? "an address handle (sendTo) is for UD queue pairs, this one is UC"
                    : op == WrView.WR_RDMA_READ || op == WrView.WR_ATOMIC_CMP_AND_SWP || op == WrView.WR_ATOMIC_WRITE
                            || op == WrView.WR_ATOMIC_FETCH_AND_ADD ? "UC queue pairs have no RDMA read or atomics" : null;
            default -> addressed[i] ? "an address handle (sendTo) is for UD queue pairs, this one is RC"
                    : op == WrView.WR_ATOMIC_WRITE ? SendRefusals.ATOMIC_WRITE_NEEDS_WR_API : null;
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
