package dev.rdma4j;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Equal receive buffers carved from one region and kept posted on a {@link SharedReceiveQueue}, so that a
 * server needs no refill code: every buffer is posted at once ({@code ibv_post_srq_recv}); a receive's
 * completion names its buffer (its wr_id, {@link #buffer(long)}); when the application
 * is done with the bytes it gives the buffer back with {@link #release(long)}, which posts it again. The
 * SRQ's limit event is the back-stop: a buffer whose repost failed (the queue momentarily full) is posted again
 * when the number posted falls below a quarter of the pool ({@link SharedReceiveQueue#refillOnLimit}).
 *
 * <p>The pool owns its SRQ ({@link SharedReceiveQueue#owner()}) until it is closed: the SRQ's own posts,
 * {@code armLimit}, {@code resize} and {@code refillOnLimit} are refused meanwhile, so that the pool alone posts and
 * alone re-arms the limit; listeners may still observe its events. {@link #limitEvents()}, {@link #limitReposts()}
 * and {@link #posted()} tell what it did. Completions of the SRQ come only from this pool's receives. A failed receive
 * completion (e.g. flushed when its QP went to error) still returns its buffer with {@link #release(long)}; nothing
 * is reposted once the SRQ is in error or the pool is closed.
 *
 * <p>Threading: thread-safe; {@link #release(long)} may be called from any thread, the engine's included
 * (it never blocks: posting is a provider call).
 */
public final class ReceivePool implements AutoCloseable {
    private final SharedReceiveQueue srq;
    private final MemoryRegion region;
    private final long offset;
    private final int slotSize;
    private final int slots;
    /** Per buffer: the generation its current wr_id carries (guarded by this). */
    private final int[] generation;
    /** Per buffer: released, but its repost failed; the limit event posts it (guarded by this). */
    private final boolean[] waiting;
    private final ReceiveBatch one = new ReceiveBatch(1, 1);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** SRQ_LIMIT_REACHED events handled (guarded by this). */
    private long limitEvents;
    /** Buffers the limit events posted (guarded by this). */
    private long limitReposts;
    /** The SRQ's listener that calls {@link #repostFree} (set once by {@link #create}). */
    private volatile java.util.function.Consumer<AsyncEvent> refill;

    private ReceivePool(SharedReceiveQueue srq, MemoryRegion region, long offset, int slotSize, int slots) {
        this.srq = srq;
        this.region = region;
        this.offset = offset;
        this.slotSize = slotSize;
        this.slots = slots;
        this.generation = new int[slots];
        this.waiting = new boolean[slots];
    }

    /**
     * Carves {@code region} (from {@code offset}) into buffers of {@code slotSize} bytes, as many as fit and
     * as the SRQ holds, posts them all, and arms the SRQ's limit at a quarter of them as the back-stop. The pool
     * becomes the SRQ's owner (see the class).
     *
     * @param srq      the shared receive queue (its receives must all come from this pool)
     * @param region   receive memory of the SRQ's protection domain, with {@code LOCAL_WRITE}
     * @param offset   where the buffers start in the region
     * @param slotSize bytes per buffer, at least 1
     * @return the pool, all buffers posted
     * @throws IllegalArgumentException if not one buffer fits, or the region is of another protection domain
     * @throws IllegalStateException if the SRQ has an owner already (another pool), or receives posted (a closed
     *                               pool's stay posted)
     * @throws VerbsException if a post or arming the limit fails (the SRQ is not owned then; receives posted before
     *                        the failure stay posted)
     */
    public static ReceivePool create(SharedReceiveQueue srq, MemoryRegion region, long offset, int slotSize)
            throws VerbsException {
        if (slotSize < 1 || offset < 0 || offset > region.length()) {
            throw new IllegalArgumentException("buffers of " + slotSize + " bytes from offset " + offset
                    + " in a region of " + region.length());
        }
        if (region.protectionDomain() != srq.protectionDomain()) {
            throw new IllegalArgumentException("the region belongs to another protection domain than the SRQ");
        }
        long fit = (region.length() - offset) / slotSize;
        int n = (int) Math.min(fit, srq.query().maxWr());
        if (n < 1) {
            throw new IllegalArgumentException("no buffer of " + slotSize + " bytes fits in " + region);
        }
        srq.claim("a ReceivePool of " + n + " buffers");
        int posted = srq.outstanding();
        if (posted > 0) { // another's (a closed pool's stay posted): their completions would look like this pool's
            srq.disown(null);
            throw new IllegalStateException(srq + " has " + posted + " receives posted: a ReceivePool needs an SRQ"
                    + " whose receives are all its own");
        }
        ReceivePool pool = new ReceivePool(srq, region, offset, slotSize, n);
        int watermark = Math.max(1, n / 4);
        try {
            for (int i = 0; i < n; i++) {
                pool.post(i);
            }
            pool.refill = srq.refillForOwner(watermark, q -> pool.repostFree(watermark));
        } catch (VerbsException | RuntimeException e) {
            pool.close(); // the SRQ is the caller's again; the receives posted stay posted
            throw e;
        }
        return pool;
    }

    /**
     * How many buffers the pool has.
     *
     * @return the count
     */
    public int size() {
        return slots;
    }

    /**
     * The bytes of buffer {@code wrId} (a receive completion's wr_id), for reading until it is released.
     *
     * @param wrId the completion's wr_id
     * @return the whole buffer (the completion's byte length says how much was received)
     * @throws IllegalArgumentException if {@code wrId} names no buffer of this pool
     */
    public MemorySegment buffer(long wrId) {
        return region.segment().asSlice(offset + (long) index(wrId) * slotSize, slotSize);
    }

    /**
     * Gives buffer {@code wrId} back after its completion was polled: it is posted again at once
     * ({@code ibv_post_srq_recv}) under a new wr_id, or, if that fails (the queue momentarily full), at the next
     * limit event. Nothing is posted once the pool is closed or the SRQ in error or closed.
     *
     * @param wrId the completion's wr_id
     * @throws IllegalArgumentException if {@code wrId} names no buffer of this pool
     * @throws IllegalStateException    if that buffer was already released (its wr_id is stale)
     */
    public void release(long wrId) {
        int i = index(wrId);
        synchronized (this) {
            if ((int) (wrId >>> 32) != generation[i]) {
                throw new IllegalStateException("buffer " + i + " of the pool was already released (stale wr_id "
                        + wrId + ")");
            }
            generation[i]++;
            if (closed.get() || srq.isInError() || srq.isClosed()) {
                return;
            }
            try {
                postLocked(i);
            } catch (VerbsException | IllegalStateException e) {
                waiting[i] = true; // the limit event's repost takes it
            }
        }
    }

    /**
     * How many released buffers wait for a repost that failed (normally 0).
     *
     * @return waiting buffers
     */
    public synchronized int waiting() {
        int n = 0;
        for (boolean w : waiting) {
            n += w ? 1 : 0;
        }
        return n;
    }

    /**
     * How many of its buffers are posted on the SRQ now ({@code ibv_post_srq_recv}), as rdma4j counts them
     * ({@link SharedReceiveQueue#outstanding()}: a receive consumed by the device counts until its completion is
     * polled). Thread-safe, a volatile read.
     *
     * @return posted buffers, 0 to {@link #size()}
     */
    public int posted() {
        return srq.outstanding();
    }

    /**
     * How many SRQ_LIMIT_REACHED events the pool handled (each posted the buffers waiting, if any, and re-armed the
     * limit): the number posted fell below a quarter of the pool that many times. Thread-safe.
     *
     * @return the count since the pool was made
     */
    public synchronized long limitEvents() {
        return limitEvents;
    }

    /**
     * How many buffers the limit events posted: released buffers whose repost had failed (normally 0, as a polled
     * completion frees the slot its buffer is reposted into). Thread-safe.
     *
     * @return the count since the pool was made
     */
    public synchronized long limitReposts() {
        return limitReposts;
    }

    private int index(long wrId) {
        long slot = wrId & 0xffff_ffffL;
        if (wrId < 0 || slot >= slots) {
            throw new IllegalArgumentException("wr_id " + wrId + " is no buffer of this pool of " + slots);
        }
        return (int) slot;
    }

    private synchronized void post(int i) throws VerbsException {
        postLocked(i);
    }

    private void postLocked(int i) throws VerbsException {
        long wrId = ((long) generation[i] << 32) | i;
        srq.postForOwner(one.clear().receive(wrId, region, offset + (long) i * slotSize, slotSize));
        waiting[i] = false;
    }

    /**
     * The limit event: posts the buffers whose repost failed and re-arms the limit at {@code watermark}, under the
     * pool's lock, so that a closed pool (whose close gives the SRQ back under the same lock) neither posts nor arms.
     */
    private synchronized void repostFree(int watermark) throws VerbsException {
        limitEvents++;
        if (closed.get()) {
            return;
        }
        for (int i = 0; i < slots; i++) {
            if (waiting[i]) {
                postLocked(i);
                limitReposts++;
            }
        }
        srq.arm(watermark);
    }

    /**
     * Stops reposting and gives the SRQ back: its limit event no longer reposts, and its own posts,
     * {@code armLimit}, {@code resize} and {@code refillOnLimit} work again (another pool may own it). The buffers
     * still posted stay posted, under the pool's wr_ids; the SRQ and the region stay the caller's.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            synchronized (this) { // a limit event under way reposts and re-arms before, or sees the pool closed
                one.close();
                srq.disown(refill);
            }
        }
    }
}
