package dev.rdma4j;

import dev.rdma4j.internal.ffi.AhSrqCqAttrs;
import dev.rdma4j.internal.ffi.DataPath;
import dev.rdma4j.internal.ffi.EventVerbs;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.WcView;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue ({@code struct ibv_cq}, from {@code ibv_create_cq}). {@link #poll} drains it into
 * a reusable {@link WorkCompletions} batch without allocating; each completion carries the caller's
 * own wr_id, and polling a completion releases the regions its request pinned. Closing is refused
 * while queue pairs use it.
 */
public final class CompletionQueue extends NativeResource {
    private final Context context;
    private final MemorySegment handle;
    private final MemorySegment pollFn;
    /** An extended CQ's poll functions ({@code ibv_start_poll} ...), or null for a plain one ({@code ibv_poll_cq}). */
    private final dev.rdma4j.internal.ffi.CqExVerbs.Poller extended;
    /** Whether its entries carry completion timestamps. */
    private final boolean timestamps;
    private final MemorySegment notifyFn;
    private final int size;
    private final ReentrantLock pollLock = new ReentrantLock();
    private final CompletionChannel channel;
    private final Object eventLock = new Object();
    private int unackedEvents;
    /** The engine thread that alone may poll, or null. */
    private volatile Thread drivenBy;
    /**
     * Send requests posted to the queue pairs whose sends complete here by the engine thread that drives the queue
     * (in its dispatch), counted (its own field: posts of other threads are not counted, nor do they write here).
     * The engine's drain polls again after a dispatch only when it posted a send; the drain armed the queue before
     * it polled, so a send it does not see costs an event, not a completion.
     */
    private int sendsPosted;
    private boolean destroying;
    /** Set under {@link #pollLock} before the queue is destroyed; {@link #poll} checks it under the lock. */
    private boolean destroyed;
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<AsyncEvent>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    CompletionQueue(Context context, int minSize, CompletionChannel channel, int vector) throws VerbsException {
        this(context, minSize, channel, vector, false, false);
    }

    /** With {@code extended}: {@code ibv_create_cq_ex} with the standard entries, and timestamps if asked. */
    CompletionQueue(Context context, int minSize, CompletionChannel channel, int vector, boolean extended,
            boolean timestamps) throws VerbsException {
        super("CompletionQueue(" + context.device().name() + (extended ? ", extended" : "") + ")",
                checkSize(context, minSize));
        this.context = context;
        this.channel = channel;
        this.timestamps = timestamps;
        MemorySegment cq;
        try {
            if (channel != null) {
                channel.addDependent(this); // the channel cannot close under its CQs
            }
            try {
                MemorySegment ch = channel == null ? MemorySegment.NULL : channel.handle();
                cq = !extended ? ResourceVerbs.createCq(context.handle(), minSize, ch, vector)
                        : dev.rdma4j.internal.ffi.CqExVerbs.createCqEx(context.handle(), minSize, ch, vector,
                                dev.rdma4j.internal.ffi.CEnums.IBV_WC_STANDARD_FLAGS | (timestamps
                                        ? dev.rdma4j.internal.ffi.CEnums.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0));
            } catch (NativeException e) {
                if (channel != null) {
                    channel.removeDependent(this);
                }
                throw VerbsException.from(e);
            } catch (RuntimeException e) {
                if (channel != null) {
                    channel.removeDependent(this);
                }
                throw e;
            }
        } catch (VerbsException | RuntimeException e) {
            abandon();
            throw e;
        }
        this.handle = cq;
        this.extended = extended ? new dev.rdma4j.internal.ffi.CqExVerbs.Poller(cq, timestamps) : null;
        this.size = AhSrqCqAttrs.cqe(cq);
        this.pollFn = DataPath.op(context.handle(), DataPath.Op.POLL_CQ);
        this.notifyFn = DataPath.op(context.handle(), DataPath.Op.REQ_NOTIFY_CQ);
        if (channel != null) {
            channel.attach(this);
        }
        context.register(cq.address(), this);
    }

    private static Context checkSize(Context context, int minSize) {
        if (minSize < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry: " + minSize);
        }
        return context;
    }

    /**
     * The context the queue belongs to.
     *
     * @return the context
     */
    public Context context() {
        return context;
    }

    /**
     * The number of entries the device gave the queue ({@code ibv_cq.cqe}), at least the size asked for.
     *
     * @return entries
     */
    public int size() {
        return size;
    }

    /**
     * Polls up to {@code completions.capacity()} completions ({@code ibv_poll_cq}, through
     * {@code context->ops.poll_cq}). Allocation-free; thread-safe (pollers are serialised).
     * Completions of queue pairs closed meanwhile are dropped.
     *
     * @param completions the batch to fill; its {@code count()} becomes the return value
     * @return the number of completions, 0 if none is ready
     * @throws VerbsException if the verb itself fails (the CQ is broken, e.g. after a device fatal error)
     * @throws IllegalStateException if the queue or {@code completions} is closed, or a {@code CompletionEngine}
     *         drives it and this is not the engine's thread
     */
    public int poll(WorkCompletions completions) throws VerbsException {
        Thread driver = drivenBy;
        if (driver != null && driver != Thread.currentThread()) {
            completions.emptied(false); // a refused poll says nothing of the queue
            throw new IllegalStateException(this + " is driven by the completion engine " + driver.getName()
                    + ": its completions complete futures and go to its fallback handler; polling it here would"
                    + " steal them");
        }
        return pollForDriver(completions);
    }

    /** {@link #sendsPosted}, for the engine's drain. */
    int sendsPosted() {
        return sendsPosted;
    }

    /** A send was posted to a queue pair completing here: counted when the engine driving the queue posted it. */
    void sendPosted() {
        if (drivenBy == Thread.currentThread()) {
            sendsPosted++;
        }
    }

    /** {@link #poll} without the engine-thread check: for the engine's own dispatch on a waiting caller's thread. */
    int pollForDriver(WorkCompletions completions) throws VerbsException {
        completions.emptied(false); // a poll refused below says nothing of the queue
        ensureOpen(); // a plain read: once a close is announced, pollers stop contending for the lock it needs
        pollLock.lock(); // serialises pollers, and destroy() takes it first: no acquire/release of the counter
        try {
            if (destroyed) {
                throw closedError();
            }
            MemorySegment wcs = completions.segment();
            int n = extended == null ? DataPath.pollCq(pollFn, handle.address(), completions.capacity(), wcs)
                    : extended.poll(completions.capacity(), wcs, completions.timestamps());
            completions.timestamped = timestamps;
            completions.emptied(n >= 0 && n < completions.capacity()
                    && (extended == null || !extended.stoppedOnError()));
            if (n < 0) {
                completions.count(0);
                throw VerbsException.of("ibv_poll_cq", -n > 1 ? -n : dev.rdma4j.internal.ffi.CConstants.EIO, description());
            }
            int kept = n > 0 ? takeCompleted(completions, wcs, n) : 0;
            completions.count(kept);
            return kept;
        } finally {
            pollLock.unlock();
        }
    }

    /**
     * The {@code n} completions just polled into {@code wcs} (poll lock held): each request's book-keeping done, the
     * caller's wr_id given back, those of destroyed queue pairs dropped; returns how many are kept. A method of its
     * own, called only when a poll found something: a busy poller's polls are nearly all empty, so C2 saw this loop's
     * calls as rare inside {@link #pollForDriver} and inlined none of them (PrintInlining: "low call site
     * frequency"), each an out-of-line call per completion; compiled apart, the loop is its own hot path.
     */
    private static int takeCompleted(WorkCompletions completions, MemorySegment wcs, int n) {
        int kept = 0;
        for (int i = 0; i < n; i++) {
            long id = WcView.wrId(wcs, i);
            WorkRequestIds.Owner owner = WorkRequestIds.owner(id);
            if (owner == null) {
                continue; // its queue pair was destroyed: nothing waits for it
            }
            completions.buffer(i, null, 0);
            boolean recv = WorkRequestIds.isRecv(id);
            long userWrId = owner.complete(recv, WorkRequestIds.seq(id), completions, i);
            if (kept != i) {
                WcView.move(wcs, i, kept);
                completions.moveBuffer(i, kept);
            }
            WcView.wrId(wcs, kept, userWrId);
            completions.driver(kept, owner.driver());
            completions.receive(kept, recv); // the C opcode of a failed completion is undefined
            kept++;
        }
        return kept;
    }

    /**
     * Whether the queue was created with {@code ibv_create_cq_ex} and is polled through {@code ibv_start_poll},
     * {@code ibv_next_poll}, {@code ibv_end_poll} and the {@code ibv_wc_read_*} accessors.
     *
     * @return true for an extended queue
     */
    public boolean isExtended() {
        return extended != null;
    }

    /** See {@code Access.drive(CompletionQueue, Thread)}. */
    void drive(Thread engineThread) {
        drivenBy = engineThread;
        if (channel != null) {
            channel.drivenBy(engineThread);
        }
    }

    @Override
    String label() {
        return "CompletionQueue(" + context.device().name() + ", " + size + " entries"
                + (drivenBy != null ? ", driven by the CompletionEngine thread " + drivenBy.getName() : "") + ")";
    }

    /**
     * Arms the queue's completion channel for the next completion ({@code ibv_req_notify_cq}).
     *
     * @param solicitedOnly notify only for solicited (or error) completions
     * @throws VerbsException if the verb fails
     */
    public void requestNotification(boolean solicitedOnly) throws VerbsException {
        acquire(false);
        try {
            int rc = DataPath.reqNotifyCq(notifyFn, handle, solicitedOnly);
            if (rc != 0) {
                throw VerbsException.of("ibv_req_notify_cq", rc, description());
            }
        } finally {
            release(false);
        }
    }

    /**
     * The completion channel the queue reports to.
     *
     * @return the channel, or null for a queue created for polling only
     */
    public CompletionChannel channel() {
        return channel;
    }

    /** The channel delivered an event for this CQ (counted until acknowledged). */
    void eventReceived() {
        synchronized (eventLock) {
            if (destroying) {
                EventVerbs.ackCqEvents(handle, 1); // ibv_destroy_cq is waiting for exactly this
            } else {
                unackedEvents++;
            }
        }
    }

    /**
     * Waits for completions without an engine, the synchronous counterpart of a C program's
     * {@code ibv_get_cq_event} loop: polls; when nothing is there, arms the queue
     * ({@code ibv_req_notify_cq}), polls again (a completion between the two raises no event), waits on its
     * completion channel ({@link CompletionChannel#awaitEvent}), acknowledges the event and polls. The CQ
     * must have been created with a channel, and no other thread may take events from that channel
     * meanwhile.
     *
     * @param completions the batch to fill
     * @param timeout     the longest wait (not negative; longer than {@code Long.MAX_VALUE} nanoseconds, about 292
     *                    years, is taken as that)
     * @return the number of completions, 0 at the timeout
     * @throws VerbsException if a verb fails
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalStateException if the queue has no completion channel, is driven by an engine, or is
     *                               closed, or this is a completion engine's thread
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public int await(WorkCompletions completions, java.time.Duration timeout)
            throws VerbsException, InterruptedException {
        long budget = CompletionChannel.nanos(timeout);
        dev.rdma4j.internal.EngineThreads.refuseBlocking("CompletionQueue.await");
        if (channel == null) {
            throw new IllegalStateException(this + " has no completion channel to wait on: create it with one"
                    + " (context.createCompletionQueue(size, channel, vector)), or poll it");
        }
        long start = System.nanoTime();
        for (;;) {
            int n = poll(completions);
            if (n > 0) {
                return n;
            }
            requestNotification(false);
            n = poll(completions);
            if (n > 0) {
                return n;
            }
            long left = budget - (System.nanoTime() - start);
            if (left <= 0) {
                return 0;
            }
            CompletionQueue ready = channel.awaitEvent(java.time.Duration.ofNanos(left));
            if (ready == null) {
                return poll(completions); // the timeout: one last look
            }
            ready.acknowledgeEvents();
        }
    }

    /**
     * Acknowledges the events {@link CompletionChannel#nextEvent()} returned for this queue
     * ({@code ibv_ack_cq_events}); cheap enough to batch, and done by {@code close()} for any left over.
     *
     * @return how many were acknowledged
     */
    public int acknowledgeEvents() {
        synchronized (eventLock) {
            int n = unackedEvents;
            if (n > 0 && !destroying) {
                EventVerbs.ackCqEvents(handle, n);
                unackedEvents = 0;
            }
            return n;
        }
    }

    /**
     * Adds a listener for this queue's asynchronous events ({@code IBV_EVENT_CQ_ERR}).
     *
     * @param listener called on the thread that processes the context's async events
     */
    public void addEventListener(java.util.function.Consumer<AsyncEvent> listener) {
        listeners.add(listener);
    }

    void dispatch(AsyncEvent e) {
        context.notifyListeners(listeners, e);
    }

    /** Held while a queue pair using this CQ is destroyed, so no poll runs its completions meanwhile. */
    ReentrantLock pollLock() {
        return pollLock;
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    void destroy() {
        pollLock.lock(); // waits for a poll in progress; later ones see the flag
        try {
            destroyed = true;
        } finally {
            pollLock.unlock();
        }
        synchronized (eventLock) { // every delivered event must be acknowledged or ibv_destroy_cq blocks
            destroying = true;
            if (unackedEvents > 0) {
                EventVerbs.ackCqEvents(handle, unackedEvents);
                unackedEvents = 0;
            }
        }
        context.unregister(handle.address());
        try {
            ResourceVerbs.destroyCq(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        } finally {
            if (channel != null) {
                channel.detach(this);
                channel.removeDependent(this);
            }
        }
    }
}
