package dev.rdma4j;

import dev.rdma4j.internal.ffi.AhSrqCqAttrs;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A shared receive queue ({@code struct ibv_srq}, from {@code ibv_create_srq}): one pool of posted
 * receives that many queue pairs (RC or UD, built with {@link QueuePairBuilder#sharedReceiveQueue})
 * consume. Receive completions name the consuming QP ({@code qp_num}) and hand back the buffer that
 * received the data ({@link WorkCompletions#buffer(int)}).
 *
 * <p><b>Limit.</b> When fewer than {@link SrqAttributes#limit()} receives remain posted, the device
 * raises {@link AsyncEventType#SRQ_LIMIT_REACHED} once and resets the limit to 0;
 * {@link #nextLimitEventAsync()} and {@link #addEventListener} deliver it (the context's async events must be
 * processed: {@code engine.watchAsyncEvents(ctx)} or {@link Context#processAsyncEvents()}), and
 * {@link #refillOnLimit} keeps the pool topped up and the limit re-armed by itself ({@link ReceivePool} does
 * all of it for equal buffers carved from one region). The event comes through
 * the context's async fd, not the CQ: a poller can see the completion of the receive that crossed the limit
 * before the event is dispatched. {@link Context#processAsyncEvents()} is the barrier that waits for it.
 *
 * <p><b>Owner.</b> A {@link ReceivePool} made on the SRQ owns it: it alone posts receives and arms the limit (it
 * re-arms it in its limit listener, the only one that does). {@link #post}, {@link #tryPost}, {@link #postReceive},
 * {@link #armLimit}, {@link #resize} and {@link #refillOnLimit} then throw {@link IllegalStateException} naming the
 * owner (an {@code RdmaServer} with {@code RdmaOptions.sharedReceiveQueue(true)}, for instance): a second re-armer
 * would race the owner's (the limit is one value, reset to 0 by each event, and whichever re-arms last wins) and a
 * second poster would take buffers the owner does not know. Observing stays open: listeners added with
 * {@link #addEventListener} or {@link #nextLimitEventAsync} are called after the owner's, so the limit is re-armed
 * by the time they see the event; {@link #query()} and {@link #outstanding()} answer as usual.
 *
 * <p><b>Error.</b> After {@link AsyncEventType#SRQ_ERR} the SRQ can only be destroyed: posting and
 * modifying throw {@link IllegalStateException}.
 *
 * <p>Regions used for its receives must belong to the SRQ's own protection domain (which may differ
 * from the QPs'); a region of another PD is accepted by the post, and the receive then completes with
 * an error status ({@code LOC_PROT_ERR} or {@code LOC_QP_OP_ERR} on Soft-RoCE).
 *
 * <p>Threading: thread-safe: posts are serialised by one lock held around the provider call, so a refill action
 * on the engine thread and posts from other threads may run together.
 */
public final class SharedReceiveQueue extends NativeResource {
    private static final int MAX_WR = AhSrqCqAttrs.IBV_SRQ_MAX_WR;
    private static final int LIMIT = AhSrqCqAttrs.IBV_SRQ_LIMIT;
    private static final int EINVAL = dev.rdma4j.internal.ffi.CConstants.EINVAL;
    private static final int ENOMEM = dev.rdma4j.internal.ffi.Libc.ENOMEM;

    private final ProtectionDomain pd;
    private final Context context;
    private final MemorySegment handle;
    private final MemorySegment postFn;
    private final int maxSge;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private final ReentrantLock postLock = new ReentrantLock();
    /** Set under {@link #postLock} before the SRQ is destroyed; posts check it under the lock (no acquire). */
    private boolean destroyed;
    private final ReceiveBatch one;
    private final CopyOnWriteArrayList<Consumer<AsyncEvent>> listeners = new CopyOnWriteArrayList<>();
    private volatile SlotTable slots;
    private volatile int maxWr;
    private volatile boolean inError;
    private volatile int token;
    /** Who alone posts and arms the limit ({@link #claim}), or null: anyone may. */
    private volatile String owner;
    private final WorkRequestIds.Owner completions = new WorkRequestIds.Owner() {
        @Override
        public long complete(boolean recv, long seq, WorkCompletions wcs, int i) {
            return slots.complete(seq, wcs, i);
        }

        @Override
        public int token() {
            return token;
        }

        @Override
        public dev.rdma4j.internal.QpDriver driver() {
            return null;
        }
    };

    SharedReceiveQueue(ProtectionDomain pd, int maxWr, int maxSge, int limit) throws VerbsException {
        super("SharedReceiveQueue(" + pd.context().device().name() + ")", pd);
        this.pd = pd;
        this.context = pd.context();
        MemorySegment srq;
        int grantedWr;
        int grantedSge;
        try (Arena a = Arena.ofConfined()) {
            if (maxWr < 1 || maxSge < 1 || limit < 0 || limit > maxWr) {
                throw new IllegalArgumentException("an SRQ needs maxWr >= 1, maxSge >= 1, 0 <= limit <= maxWr: "
                        + maxWr + ", " + maxSge + ", " + limit);
            }
            MemorySegment init = AhSrqCqAttrs.srqInit(a, maxWr, maxSge, limit);
            srq = ResourceVerbs.createSrq(pd.handle(), init);
            int[] granted = AhSrqCqAttrs.srqGranted(init); // ibv_create_srq writes back the real sizes
            grantedWr = granted[0];
            grantedSge = granted[1];
        } catch (NativeException e) {
            arena.close();
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            arena.close();
            abandon();
            throw e;
        }
        this.handle = srq;
        this.maxWr = grantedWr;
        this.maxSge = grantedSge;
        this.postFn = DataPath.op(context.handle(), DataPath.Op.POST_SRQ_RECV);
        this.slots = new SlotTable(grantedWr, grantedSge);
        this.one = new ReceiveBatch(1, grantedSge);
        this.token = WorkRequestIds.register(t -> completions);
        context.register(srq.address(), this);
    }

    /**
     * The protection domain its receive buffers must belong to.
     *
     * @return the domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * Queries the SRQ ({@code ibv_query_srq}).
     *
     * @return max_wr, max_sge and the armed limit (0 after the limit event fired)
     * @throws VerbsException if the verb fails
     */
    public SrqAttributes query() throws VerbsException {
        acquire(false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = AhSrqCqAttrs.srqAttr(a, 0, 0);
            ResourceVerbs.querySrq(handle, attr);
            int[] q = AhSrqCqAttrs.srqQueried(attr);
            return new SrqAttributes(q[0], q[1], q[2]);
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Arms (or re-arms) the limit ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}).
     *
     * @param limit fire SRQ_LIMIT_REACHED when fewer receives than this remain; at most max_wr
     * @throws VerbsException if the verb fails ({@code EINVAL} above max_wr)
     * @throws IllegalStateException if the SRQ is in error or closed, or has an owner (see the class)
     */
    public void armLimit(int limit) throws VerbsException {
        refuseIfOwned("armLimit");
        arm(limit);
    }

    /** Arms the limit; the owner's re-arm too ({@link ReceivePool}, from its refill). */
    void arm(int limit) throws VerbsException {
        if (limit < 0 || limit > maxWr) {
            throw new IllegalArgumentException("the limit must be 0.." + maxWr + " (the SRQ's max_wr): " + limit);
        }
        modify(LIMIT, 0, limit);
    }

    /**
     * Grows the queue ({@code ibv_modify_srq} with {@code IBV_SRQ_MAX_WR}), where the device supports it
     * ({@code IBV_DEVICE_SRQ_RESIZE}).
     *
     * @param newMaxWr the new number of receives it holds
     * @throws VerbsException if the device refuses (e.g. {@code EINVAL} or {@code EOPNOTSUPP})
     * @throws IllegalStateException if the SRQ is in error or closed, or has an owner (see the class)
     */
    public void resize(int newMaxWr) throws VerbsException {
        refuseIfOwned("resize");
        postLock.lock();
        try {
            modify(MAX_WR, newMaxWr, 0);
            SrqAttributes now = query();
            if (now.maxWr() > maxWr) {
                SlotTable bigger = new SlotTable(now.maxWr(), maxSge);
                // receives already posted keep their old slots: move the table only when none is outstanding
                if (slots.free() == maxWr) {
                    slots = bigger;
                    maxWr = now.maxWr();
                }
            }
        } finally {
            postLock.unlock();
        }
    }

    private void modify(int mask, int newMaxWr, int limit) throws VerbsException {
        ensureUsable();
        acquire(false);
        try (Arena a = Arena.ofConfined()) {
            ResourceVerbs.modifySrq(handle, AhSrqCqAttrs.srqAttr(a, newMaxWr, limit), mask);
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Posts receives ({@code ibv_post_srq_recv} through {@code context->ops.post_srq_recv}).
     *
     * @param batch the receives
     * @throws VerbsException with the errno and the failing request
     * @throws IllegalStateException if the SRQ is in error or closed, or the batch or a region it uses is closed
     *         (nothing is posted and no slot taken), or the SRQ has an owner (see the class)
     */
    public void post(ReceiveBatch batch) throws VerbsException {
        refuseIfOwned("post");
        postForOwner(batch);
    }

    /** {@link #post} for the owner ({@link ReceivePool}). */
    void postForOwner(ReceiveBatch batch) throws VerbsException {
        int rc = tryPost0(batch);
        if (rc != 0) {
            throw VerbsException.of("ibv_post_srq_recv", rc, description() + ": request " + batch.failedIndex + " of "
                    + batch.count + (rc == ENOMEM ? " (the SRQ holds " + maxWr + " receives)" : ""));
        }
    }

    /**
     * Like {@link #post(ReceiveBatch)}, returning 0 or an errno ({@code ENOMEM} when full, {@code EINVAL} for
     * too many scatter entries).
     *
     * @param batch the receives
     * @return 0 or an errno value
     * @throws IllegalStateException as {@link #post(ReceiveBatch)}
     */
    public int tryPost(ReceiveBatch batch) {
        refuseIfOwned("tryPost");
        return tryPost0(batch);
    }

    private int tryPost0(ReceiveBatch batch) {
        int n = batch.count;
        if (n == 0) {
            return 0;
        }
        ensureUsable();
        postLock.lock(); // destroy() takes it first: a post in progress keeps the SRQ alive
        try {
            if (destroyed) {
                throw closedError();
            }
            SlotTable table = slots;
            for (int i = 0; i < n; i++) {
                if (batch.sgeCounts[i] > maxSge) {
                    batch.failedIndex = i;
                    return EINVAL;
                }
            }
            return batch.post(table, token, true, postFn, handle, badWr);
        } finally {
            postLock.unlock();
        }
    }

    /**
     * Posts one receive; a shortcut for a one-request {@link ReceiveBatch}.
     *
     * @param wrId   returned in the completion
     * @param region a region of this SRQ's protection domain
     * @param offset offset in it
     * @param length bytes
     * @throws VerbsException if the verb refuses
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative or the range does not fit the
     *                                  region (the message names the argument and the values)
     * @throws IllegalStateException    if the SRQ is in error or closed, or has an owner (see the class)
     */
    public void postReceive(long wrId, MemoryRegion region, long offset, int length) throws VerbsException {
        refuseIfOwned("postReceive");
        postLock.lock();
        try {
            if (destroyed) {
                throw closedError();
            }
            post(one.clear().receive(wrId, region, offset, length));
        } finally {
            postLock.unlock();
        }
    }

    /**
     * Adds a listener for this SRQ's asynchronous events (SRQ_LIMIT_REACHED, SRQ_ERR): an observer, allowed on an
     * owned SRQ too (called after the owner's listener, which re-armed the limit).
     *
     * @param listener called on the thread that processes the context's async events
     */
    public void addEventListener(Consumer<AsyncEvent> listener) {
        listeners.add(listener);
    }

    /**
     * The next SRQ_LIMIT_REACHED event, as a future.
     *
     * @return completes when the limit event is delivered
     */
    public CompletableFuture<AsyncEvent> nextLimitEventAsync() {
        CompletableFuture<AsyncEvent> f = new CompletableFuture<>();
        Consumer<AsyncEvent> once = new Consumer<>() {
            @Override
            public void accept(AsyncEvent e) {
                if (e.type() == AsyncEventType.SRQ_LIMIT_REACHED) {
                    listeners.remove(this);
                    f.complete(e);
                }
            }
        };
        listeners.add(once);
        return f;
    }

    /**
     * Keeps the pool topped up: on every SRQ_LIMIT_REACHED event, {@code refill} posts receives (it is given
     * this SRQ; it should post until the pool is as full as wanted), then the limit is re-armed at
     * {@code watermark}. Runs on the thread processing async events. A consumed receive's slot becomes free
     * for reposting only once its completion has been polled, and the device raises the event only when a
     * receive is consumed below the limit: if the pollers lag, call the same action after polling too, or
     * the pool can run dry with the limit armed below the remaining count.
     *
     * @param watermark the limit to re-arm, e.g. a quarter of max_wr
     * @param refill    posts the receives
     * @throws VerbsException if arming the limit the first time fails
     * @throws IllegalStateException if the SRQ has an owner, which re-arms the limit itself (see the class)
     */
    public void refillOnLimit(int watermark, RefillAction refill) throws VerbsException {
        refuseIfOwned("refillOnLimit");
        refillForOwner(watermark, q -> {
            refill.refill(q);
            arm(watermark);
        });
    }

    /**
     * Arms the limit at {@code watermark} and calls {@code refill} on every limit event, which re-arms it ({@link #arm}:
     * {@link #refillOnLimit}'s does after its caller's action, {@link ReceivePool}'s under the pool's lock): returns the
     * listener, which the owner removes when it gives the SRQ back ({@link #disown}); none is left when arming fails.
     */
    Consumer<AsyncEvent> refillForOwner(int watermark, RefillAction refill) throws VerbsException {
        Consumer<AsyncEvent> l = e -> {
            if (e.type() != AsyncEventType.SRQ_LIMIT_REACHED || isClosed() || inError) {
                return;
            }
            try {
                refill.refill(this);
            } catch (VerbsException | RuntimeException ex) {
                System.getLogger("dev.rdma4j").log(System.Logger.Level.WARNING, "SRQ refill failed", ex);
            }
        };
        addEventListener(l);
        try {
            arm(watermark);
        } catch (VerbsException | RuntimeException e) {
            listeners.remove(l);
            throw e;
        }
        return l;
    }

    /**
     * The owner gives the SRQ back: its refill listener ({@code refill}, or null) is removed and the public posts,
     * {@link #armLimit}, {@link #resize} and {@link #refillOnLimit} work again.
     */
    synchronized void disown(Consumer<AsyncEvent> refill) {
        if (refill != null) {
            listeners.remove(refill);
        }
        owner = null;
    }

    /**
     * Makes {@code who} the SRQ's owner: from now on the public posts, {@link #armLimit}, {@link #resize} and
     * {@link #refillOnLimit} refuse, naming it ({@link #renameOwner} may name it better later).
     *
     * @throws IllegalStateException if the SRQ has an owner already
     */
    synchronized void claim(String who) {
        if (owner != null) {
            throw new IllegalStateException(description() + " is owned by " + owner + " already: one ReceivePool"
                    + " per SRQ");
        }
        owner = who;
    }

    /** The owner's name, as users see it in refusals. */
    synchronized void renameOwner(String who) {
        if (owner != null) {
            owner = who;
        }
    }

    /**
     * The SRQ's owner, or null if it has none: see the class.
     *
     * @return who alone posts on the SRQ and re-arms its limit, or null
     */
    public String owner() {
        return owner;
    }

    private void refuseIfOwned(String what) {
        String o = owner;
        if (o != null) {
            throw new IllegalStateException(what + " refused: " + description() + " belongs to " + o
                    + ", which posts its receives and re-arms its limit itself (observe it with addEventListener,"
                    + " or the owner's statistics)");
        }
    }

    /** What {@link #refillOnLimit} does to top the pool up. */
    @FunctionalInterface
    public interface RefillAction {
        /**
         * Posts receives.
         *
         * @param srq the SRQ to post to
         * @throws VerbsException if a post fails
         */
        void refill(SharedReceiveQueue srq) throws VerbsException;
    }

    /**
     * Whether the device put the SRQ in error ({@link AsyncEventType#SRQ_ERR}); it can then only be closed.
     *
     * @return {@code true} after SRQ_ERR
     */
    public boolean isInError() {
        return inError;
    }

    /**
     * How many receives are posted and not yet consumed (as rdma4j counts them).
     *
     * @return outstanding receives
     */
    public int outstanding() {
        return maxWr - slots.free();
    }

    void dispatch(AsyncEvent e) {
        if (e.type() == AsyncEventType.SRQ_ERR) {
            inError = true;
        }
        context.notifyListeners(listeners, e);
    }

    private void ensureUsable() {
        ensureOpen();
        if (inError) {
            throw new IllegalStateException(description() + " is in error (SRQ_ERR): it can only be closed");
        }
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    void destroy() {
        postLock.lock(); // a post in progress ends first; later ones see the flag
        try {
            destroyed = true;
        } finally {
            postLock.unlock();
        }
        context.unregister(handle.address());
        WorkRequestIds.unregister(token);
        try {
            ResourceVerbs.destroySrq(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        } finally {
            slots.releaseAll();
            one.close();
            arena.close();
        }
    }
}
