package dev.rdma4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What send and receive batches share: native work-request and scatter/gather arrays allocated
 * once, encoded in place and reused, plus the Java-side record of which regions each request uses.
 * Not thread-safe: a batch belongs to one thread at a time.
 */
abstract sealed class RequestBatch implements AutoCloseable permits SendBatch, ReceiveBatch {
    private final Arena arena = Arena.ofShared();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The sequence of each request's claimed slot during a post, so a refusal gives it back without reading the batch's native memory. */
    private final long[] seqs;
    final int capacity;
    final int maxSge;
    final int refsPerRequest;
    final MemorySegment wrs;
    final MemorySegment sges;
    final long[] wrIds;
    final int[] sgeCounts;
    final long[] bytes;
    final NativeResource[] refs;
    final int[] refCounts;
    final MemoryRegion[] firstRegions;
    final long[] firstOffsets;
    /** The most requests a batch holds: far beyond any device's queue depth (and its arrays stay int-indexed). */
    static final int MAX_CAPACITY = 1 << 16;
    /** The most scatter/gather entries per request: beyond any device's max_sge. */
    static final int MAX_SGE = 1 << 10;
    int count;
    int failedIndex = -1;
    /**
     * How many requests the last post put on the device (those before {@link #failedIndex} when the provider refused
     * one; none when rdma4j's checks refused one before the post, or the queue was full): see {@link #beginPost}.
     * Kept for send batches (an {@code AsyncQueuePair}'s chains); a refused receive post may leave an older count.
     */
    int posted;
    /** Native memory the batch owns for request i's copied data: {@code ownBytes} bytes at {@code i * ownBytes}. */
    final MemorySegment own;
    final long ownBytes;

    RequestBatch(int capacity, int maxSge, int extraRefs, long wrSize) {
        this(capacity, maxSge, extraRefs, wrSize, 0);
    }

    /** With {@code ownBytes} bytes of native memory per request for data the batch copies (inline sends). */
    RequestBatch(int capacity, int maxSge, int extraRefs, long wrSize, long ownBytes) {
        if (capacity < 1 || maxSge < 0) {
            throw new IllegalArgumentException("a batch needs capacity >= 1 and maxSge >= 0: " + capacity + ", "
                    + maxSge);
        }
        if (capacity > MAX_CAPACITY || maxSge > MAX_SGE) {
            throw new IllegalArgumentException("a batch holds at most " + MAX_CAPACITY + " requests of at most " + MAX_SGE
                    + " scatter/gather entries: " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.refsPerRequest = maxSge + extraRefs;
        this.wrs = arena.allocate(wrSize * capacity, 8);
        this.sges = arena.allocate(dev.rdma4j.internal.ffi.WrView.SGE_SIZE * Math.max(1, capacity * maxSge), 8);
        this.wrIds = new long[capacity];
        this.sgeCounts = new int[capacity];
        this.bytes = new long[capacity];
        this.refs = new NativeResource[capacity * Math.max(1, refsPerRequest)];
        this.refCounts = new int[capacity];
        this.firstRegions = new MemoryRegion[capacity];
        this.firstOffsets = new long[capacity];
        this.seqs = new long[capacity];
        this.ownBytes = ownBytes;
        this.own = ownBytes == 0 ? MemorySegment.NULL : arena.allocate(ownBytes * capacity, 8);
    }

    /** Starts request number {@code count}; the subclass encodes it. */
    final int begin(long wrId) {
        ensureRoom();
        int i = count++;
        wrIds[i] = wrId;
        sgeCounts[i] = 0;
        bytes[i] = 0;
        for (int k = 0; k < refCounts[i]; k++) {
            refs[i * refsPerRequest + k] = null;
        }
        refCounts[i] = 0;
        firstRegions[i] = null;
        failedIndex = -1;
        return i;
    }

    /**
     * Undoes request {@code i}, the last one begun, after encoding it failed (a bad range, a null address
     * handle, ...): the batch is as it was before the call, so the half-built request is never posted.
     *
     * @return {@code e}, to throw
     */
    final RuntimeException undo(int i, RuntimeException e) {
        if (count == i + 1) {
            for (int k = 0; k < refCounts[i]; k++) {
                refs[i * refsPerRequest + k] = null;
            }
            refCounts[i] = 0;
            sgeCounts[i] = 0;
            bytes[i] = 0;
            firstRegions[i] = null;
            unlink(i);
            count = i;
        }
        return e;
    }

    /** Cuts request {@code i} off the chain: the next pointer of request {@code i - 1} back to NULL. */
    abstract void unlink(int i);

    /** @throws IllegalStateException if the batch is closed or full */
    final void ensureRoom() {
        ensureOpen();
        if (count == capacity) {
            throw new IllegalStateException("batch is full (" + capacity + " requests); post it or clear() it");
        }
    }

    /** @throws IllegalStateException naming the batch, if it is closed (its native arrays are gone) */
    final void ensureOpen() {
        if (closed.get()) {
            throw closedError();
        }
    }

    final IllegalStateException closedError() {
        return new IllegalStateException(this + " is closed");
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + capacity + " requests)";
    }

    /** Adds a scatter/gather entry to request {@code i}; returns the SGE's index in {@link #sges}. */
    final int addSge(int i, MemoryRegion region, long offset, int length) {
        if (sgeCounts[i] == maxSge) {
            throw new IllegalArgumentException("this batch allows " + maxSge + " scatter/gather entries per request");
        }
        if (length < 0) {
            throw new IllegalArgumentException("negative length: " + length);
        }
        region.checkRange(offset, length);
        if (sgeCounts[i] == 0) { // the buffer a receive completion hands back
            firstRegions[i] = region;
            firstOffsets[i] = offset;
        }
        int s = i * maxSge + sgeCounts[i]++;
        dev.rdma4j.internal.ffi.WrView.sge(sges, s, region.address() + offset, length, region.lkey());
        bytes[i] += length;
        addRef(i, region);
        return s;
    }

    /**
     * Adds a scatter/gather entry of memory the batch itself owns (inline data staged at encode time): no
     * region, no lkey (the provider ignores it for {@code IBV_SEND_INLINE}), nothing pinned.
     */
    final int addOwnSge(int i, long address, int length) {
        if (sgeCounts[i] == maxSge) {
            throw new IllegalArgumentException("this batch allows " + maxSge + " scatter/gather entries per request");
        }
        int s = i * maxSge + sgeCounts[i]++;
        dev.rdma4j.internal.ffi.WrView.sge(sges, s, address, length, 0);
        bytes[i] += length;
        return s;
    }

    final void addRef(int i, NativeResource r) {
        refs[i * refsPerRequest + refCounts[i]++] = r;
    }

    final long sgList(int i) {
        return sges.address() + i * maxSge * dev.rdma4j.internal.ffi.WrView.SGE_SIZE;
    }

    abstract long wrSize();

    abstract void wrId(int i, long wrId);

    abstract long wrId(int i);

    /**
     * Posts every request: claims a slot for each (rdma4j's wr_id into the native request, the regions
     * pinned), calls the provider's post function, and on failure gives back the slots of the requests
     * from {@code bad_wr} on. Returns 0 or the verb's errno; allocation-free.
     */
    final int post(Slots slots, int token, boolean recv, MemorySegment fn, MemorySegment queue, MemorySegment badWr) {
        return post(slots, token, recv, fn, queue, badWr, -1);
    }

    /**
     * Like {@link #post(Slots, int, boolean, MemorySegment, MemorySegment, MemorySegment)}; with
     * {@code idBase >= 0} the wr_id handed back for request {@code i} is {@code idBase | i << 48} instead of the
     * one in the batch (a driver's chain: one id for all, the index in the top bits).
     */
    final int post(Slots slots, int token, boolean recv, MemorySegment fn, MemorySegment queue, MemorySegment badWr,
            long idBase) {
        int n = claimAll(slots, token, recv, idBase);
        if (n < 0) {
            return dev.rdma4j.internal.ffi.Libc.ENOMEM; // the queue is full
        }
        badWr.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = dev.rdma4j.internal.ffi.DataPath.post(fn, queue.address(), wrs, badWr.address());
        } catch (RuntimeException e) { // the batch closed under the call: nothing reached the provider
            unclaim(slots, 0, n);
            throw closed.get() ? closedError() : e;
        }
        if (rc != 0) {
            int bad = indexOf(badWr.get(java.lang.foreign.ValueLayout.ADDRESS, 0), wrSize());
            failedIndex = bad;
            posted = bad;
            unclaim(slots, bad, n);
            return rc;
        }
        failedIndex = -1;
        posted = n;
        return 0;
    }

    /** Posts the requests through {@code submit} instead of the provider's post function; all or nothing. */
    final int post(Slots slots, int token, java.util.function.IntUnaryOperator submit) {
        int n = claimAll(slots, token, false, -1);
        if (n < 0) {
            return dev.rdma4j.internal.ffi.Libc.ENOMEM;
        }
        int rc;
        try {
            rc = submit.applyAsInt(n);
        } catch (RuntimeException e) {
            unclaim(slots, 0, n);
            throw closed.get() ? closedError() : e;
        }
        if (rc != 0) {
            failedIndex = 0;
            unclaim(slots, 0, n);
            return rc;
        }
        failedIndex = -1;
        posted = n;
        return 0;
    }

    /** A post begins: refused if the batch is closed; nothing of it is posted yet ({@link #posted}). */
    final void beginPost() {
        ensureOpen();
        posted = 0;
    }

    /** {@link #posted}, for a driver in another package. */
    final int posted() {
        return posted;
    }

    /**
     * Claims a slot for each request (rdma4j's wr_id into the native request, the regions pinned) and publishes
     * them: the number of requests, or -1 (nothing claimed, {@code failedIndex} 0) when the queue has no room.
     */
    private int claimAll(Slots slots, int token, boolean recv, long idBase) {
        ensureOpen(); // before any slot is claimed: a closed batch's requests cannot be written (issue 29)
        int n = count;
        if (slots.free() < n) {
            failedIndex = 0;
            return -1;
        }
        int claimed = 0;
        try {
            for (int i = 0; i < n; i++) {
                long seq = slots.claim(idBase < 0 ? wrIds[i] : idBase | ((long) i << 48), firstRegions[i],
                        firstOffsets[i]);
                seqs[i] = seq;
                claimed++; // counted as soon as it is taken: whatever fails next gives it back
                wrId(i, WorkRequestIds.encode(token, recv, seq));
                for (int k = 0; k < refCounts[i]; k++) {
                    slots.pin(seq, refs[i * refsPerRequest + k]);
                }
            }
        } catch (RuntimeException e) {
            unclaim(slots, 0, claimed);
            throw closed.get() ? closedError() : e; // closed by another thread meanwhile: say so, not "Already closed"
        }
        WorkRing.publish();
        return n;
    }

    private void unclaim(Slots slots, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            slots.unclaim(seqs[i]);
        }
    }

    final int indexOf(MemorySegment badWr, long wrSize) {
        long d = badWr.address() - wrs.address();
        return d >= 0 && d < wrSize * count && d % wrSize == 0 ? (int) (d / wrSize) : 0;
    }

    /**
     * Sets the wr_id that request {@code index}'s completion returns, and nothing else: a batch encoded once can
     * be posted again and again ({@code ibv_post_send} / {@code ibv_post_recv} of the same {@code ibv_send_wr} /
     * {@code ibv_recv_wr} chain, as perftest reposts its requests) with a new id each time, without encoding it
     * again. One array store: rdma4j writes its own id into the native request at each post and hands this one
     * back in the completion. Allocation-free.
     *
     * @param index the request, {@code 0 <= index < count()}
     * @param wrId  the id its next completions return
     * @throws IndexOutOfBoundsException if no request {@code index} is encoded
     */
    public final void setWrId(int index, long wrId) {
        java.util.Objects.checkIndex(index, count);
        wrIds[index] = wrId;
    }

    /**
     * The number of requests encoded.
     *
     * @return requests since the last clear
     */
    public final int count() {
        return count;
    }

    /**
     * The most requests this batch holds.
     *
     * @return the capacity
     */
    public final int capacity() {
        return capacity;
    }

    /**
     * After a failed post: the index of the request refused. When the provider refused it (the verb's
     * {@code bad_wr}), the requests before it were posted; when rdma4j's checks refused it before the post (a request
     * the queue pair cannot take, an invalidate of a window not bound there), none was. -1 when the last post
     * succeeded.
     *
     * @return the index, or -1
     */
    public final int failedIndex() {
        return failedIndex;
    }

    /** Native memory that lives as long as the batch (zeroed, 8-byte aligned). */
    final MemorySegment allocateOwn(long bytes) {
        ensureOpen();
        return arena.allocate(bytes, 8);
    }

    /** Frees the native arrays; idempotent. */
    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
