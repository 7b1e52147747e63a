package dev.rdma4j.engine;

import dev.rdma4j.AddressHandle;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.internal.access.Access;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Every data-path operation of a {@link QueuePair} as a {@link CompletableFuture} ({@code ...Async}), and through
 * its blocking view ({@link #blocking()}, {@link #blocking(java.time.Duration)}: one {@link BlockingQueuePair} for
 * every operation) parking the caller (virtual threads welcome) until the completion arrives.
 * The engine that created it drains the CQs and completes the futures; rdma4j owns the wr_ids.
 *
 * <p>A future completes with the {@link WorkCompletion}, or exceptionally with a
 * {@link WorkRequestException} carrying the typed status, or with a {@link VerbsException} when the
 * verb refused the post. The {@code ...Async} forms fail at once with {@code ENOMEM} when the queue
 * is full; the blocking view waits for room. Each call hands out its own copy of the internal future:
 * cancelling it (or completing it, or {@code orTimeout}) frees neither the request's queue room nor its
 * buffers: the room comes back and the regions are unpinned when the device completes the request or the
 * queue pair is closed ({@link #sendRoom()}, {@link #receiveRoom()}).
 * Closing completes every pending future with {@code WR_FLUSH_ERR}. An offset or length outside its region
 * is an {@link IllegalArgumentException} naming the argument and the values: the {@code ...Async} forms fail
 * their future with it, the blocking view throws it.
 *
 * <p>The wrapper owns its queue pair: the QP's own posts are refused while it is wrapped, and closing or
 * resetting the QP directly ({@code queuePair().close()}, {@code queuePair().reset()}) fails the pending
 * futures ("queue pair closed" / "queue pair reset") and gives their room back; after a reset and a new
 * connection the wrapper posts again. When its engine closes or dies, or its CQ fails, pending futures fail
 * and later posts fail at once.
 * A {@code CmConnection}'s QP may be wrapped: the connection still owns it, and either may be closed first.
 *
 * <p>The {@code timeout} of a blocking view is not negative ({@link IllegalArgumentException}, before anything is
 * posted); one longer than {@code Long.MAX_VALUE} nanoseconds (about 292 years) is taken as that: no deadline.
 *
 * <p><b>Tagged requests.</b> A wrapper made with a {@link RequestHandler}
 * ({@link CompletionEngine#wrap(QueuePair, RequestHandler)}) also posts sends and receives with a tag of the caller's
 * instead of a future ({@link #sendTagged}, {@link #receiveTagged}): nothing is allocated per request, a full queue
 * is a {@code false} return, and the handler is told of each completion, or of the failure that ends it.
 *
 * <p>Threading: thread-safe. Futures complete on the engine thread (or on a caller's that waits in
 * {@link CompletionEngine#pollWhileWaiting}), so their non-async continuations run there and must not block; the
 * blocking view detects the engine thread and throws.
 */
public final class AsyncQueuePair implements AutoCloseable {
    private static final int ENOMEM = dev.rdma4j.internal.ffi.Libc.ENOMEM;
    /** {@link #post}'s deadline for the async forms: take room now or fail. */
    private static final long NOW_OR_FAIL = -1;
    private static final Access ACCESS = Access.get();

    private final CompletionEngine engine;
    private final QueuePair qp;
    private final Driver driver = new Driver();
    private final PendingRequests pending;
    /** The engine's records of the QP's CQs, told before a request with a future is posted ({@code expect}). */
    private final DrivenQueue sendHome;
    private final DrivenQueue recvHome;
    private final Semaphore sendRoom;
    private final Semaphore recvRoom;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock recvLock = new ReentrantLock();
    private final SendBatch send;
    private final ReceiveBatch recv;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Takes the tagged requests' completions; null when the wrapper was made without one. */
    private final RequestHandler handler;
    /** How the posted requests end: completed, failed, discarded. */
    final RequestOutcomes outcomes;
    /** Every tagged send's and receive's entry (a tagged request's tag is kept by slot: nothing made per request). */
    private final PendingRequests.Pending taggedSend;
    private final PendingRequests.Pending taggedReceive;

    AsyncQueuePair(CompletionEngine engine, QueuePair qp, RequestHandler handler) {
        this.engine = engine;
        this.qp = qp;
        this.handler = handler;
        var caps = qp.capabilities();
        this.pending = new PendingRequests(caps.maxSendWr() + caps.maxRecvWr());
        this.sendRoom = new Semaphore(caps.maxSendWr());
        this.recvRoom = new Semaphore(caps.maxRecvWr());
        this.send = new SendBatch(1, Math.max(1, caps.maxSendSge()), caps.maxInlineData());
        this.recv = new ReceiveBatch(1, Math.max(1, caps.maxRecvSge()));
        this.outcomes = new RequestOutcomes(engine, qp, pending, handler);
        this.taggedSend = new PendingRequests.Pending(null, "send", sendRoom);
        this.taggedReceive = new PendingRequests.Pending(null, "receive", recvRoom);
        this.sendHome = engine.home(qp.sendCompletionQueue());
        this.recvHome = engine.home(qp.receiveCompletionQueue());
        ACCESS.drive(qp, driver); // from now on only this wrapper posts on the QP
    }

    /**
     * How many requests posted with a future (the futures-returning forms and the blocking view; not the tagged ones) are
     * outstanding: posted, not yet completed or failed.
     *
     * @return the count now (a snapshot; other threads may post or complete meanwhile)
     */
    public int outstandingFutures() {
        return pending.futures();
    }

    /**
     * The core's handle on this wrapper: the engine finds it beside each completion of the QP's requests,
     * and the QP tells it when a reset or a direct close discarded them.
     */
    final class Driver implements dev.rdma4j.internal.QpDriver {
        AsyncQueuePair owner() {
            return AsyncQueuePair.this;
        }

        RequestOutcomes outcomes() {
            return outcomes;
        }

        @Override
        public void discarded(boolean destroyed) {
            if (destroyed) {
                tearDown("queue pair closed");
            } else {
                outcomes.failPending("queue pair reset");
            }
        }
    }

    /**
     * The wrapped queue pair (for state transitions, query, endpoint).
     *
     * @return the queue pair
     */
    public QueuePair queuePair() {
        return qp;
    }

    // ---------------------------------------------------------------- tagged forms

    /**
     * Send ({@code ibv_post_send}, {@code IBV_WR_SEND}) whose completion goes to the wrapper's
     * {@link RequestHandler} with {@code tag}: nothing is allocated (the hot path of a caller that keeps its own
     * per-request state, such as {@code RdmaConnection}'s send buffers).
     *
     * @param region source
     * @param offset offset in it
     * @param length bytes
     * @param tag    the caller's, given back to the handler
     * @return true once posted (the handler hears of it once, completion or failure); false when the send queue
     *         or the request slots are full (nothing was posted)
     * @throws VerbsException           if {@code ibv_post_send} refused it (nothing was posted)
     * @throws IllegalStateException    if the wrapper has no handler, or the queue pair, its CQ or the engine is
     *                                  closed or failed
     * @throws IllegalArgumentException if the range does not fit the region
     */
    public boolean sendTagged(MemoryRegion region, long offset, int length, long tag) throws VerbsException {
        return sendTagged(region, offset, length, tag, false, false, 0);
    }

    /**
     * {@link #sendTagged(MemoryRegion, long, int, long)} with immediate data ({@code IBV_WR_SEND_WITH_IMM}) for the
     * peer's receive completion, solicited ({@code IBV_SEND_SOLICITED}) when {@code solicited}: the completion then
     * wakes a waiter armed for solicited completions only ({@link CompletionEngine#blockWhileWaiting}).
     *
     * @param region    source
     * @param offset    offset in it
     * @param length    bytes (0 for a message of immediate data only)
     * @param tag       the caller's, given back to the handler
     * @param solicited whether the send is solicited
     * @param immediate the 32 bits the peer's completion carries
     * @return as {@link #sendTagged(MemoryRegion, long, int, long)}, which also names the exceptions
     * @throws VerbsException if {@code ibv_post_send} refused it (nothing was posted)
     */
    public boolean sendTagged(MemoryRegion region, long offset, int length, long tag, boolean solicited, int immediate)
            throws VerbsException {
        return sendTagged(region, offset, length, tag, solicited, true, immediate);
    }

    private boolean sendTagged(MemoryRegion region, long offset, int length, long tag, boolean solicited,
            boolean withImmediate, int immediate) throws VerbsException {
        refuseTagged();
        if (!sendRoom.tryAcquire()) {
            return false;
        }
        long id = pending.allocate(taggedSend, tag);
        if (id < 0) {
            sendRoom.release();
            return false;
        }
        sendLock.lock();
        try {
            SendBatch one = withImmediate ? send.clear().sendWithImmediate(id, region, offset, length, immediate)
                    : send.clear().send(id, region, offset, length);
            ACCESS.post(qp, solicited ? one.solicited() : one);
        } catch (VerbsException | RuntimeException e) {
            if (pending.take(id) == null) {
                return true; // a teardown took it meanwhile and told the handler: one report, as for a post
            }
            sendRoom.release();
            throw e;
        } finally {
            sendLock.unlock();
        }
        outcomes.sweepIfEnded();
        return true;
    }

    /**
     * Receive ({@code ibv_post_recv}) whose completion goes to the wrapper's {@link RequestHandler} with
     * {@code tag}: nothing is allocated.
     *
     * @param region destination
     * @param offset offset in it
     * @param length bytes
     * @param tag    the caller's, given back to the handler
     * @return true once posted; false when the receive queue or the request slots are full
     * @throws VerbsException           if {@code ibv_post_recv} refused it (nothing was posted)
     * @throws IllegalStateException    if the wrapper has no handler, or the queue pair, its CQ or the engine is
     *                                  closed or failed
     * @throws IllegalArgumentException if the range does not fit the region
     */
    public boolean receiveTagged(MemoryRegion region, long offset, int length, long tag) throws VerbsException {
        refuseTagged();
        if (!recvRoom.tryAcquire()) {
            return false;
        }
        long id = pending.allocate(taggedReceive, tag);
        if (id < 0) {
            recvRoom.release();
            return false;
        }
        recvLock.lock();
        try {
            ACCESS.post(qp, recv.clear().receive(id, region, offset, length));
        } catch (VerbsException | RuntimeException e) {
            if (pending.take(id) == null) {
                return true;
            }
            recvRoom.release();
            throw e;
        } finally {
            recvLock.unlock();
        }
        outcomes.sweepIfEnded();
        return true;
    }

    /** The tagged forms' checks: a handler, and nothing closed or failed. */
    private void refuseTagged() {
        if (handler == null) {
            throw new IllegalStateException(qp + " was wrapped without a RequestHandler: tagged requests need one"
                    + " (CompletionEngine.wrap(qp, handler))");
        }
        if (closed.get()) {
            throw new IllegalStateException(qp + " is closed");
        }
        if (engine.isClosed()) {
            throw engine.closedError(qp);
        }
        Throwable b = outcomes.broken();
        if (b != null) {
            throw new IllegalStateException("the completion queue of " + qp + " failed (" + b.getMessage()
                    + "): nothing would complete the request", b);
        }
    }

    // ---------------------------------------------------------------- async forms

    /**
     * Send ({@code IBV_WR_SEND}).
     *
     * @param region source
     * @param offset offset in it
     * @param length bytes
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> sendAsync(MemoryRegion region, long offset, int length) {
        return postSend("send", NOW_OR_FAIL, new RequestEncoder.Send(region, offset, length));
    }

    /**
     * Send with immediate data ({@code IBV_WR_SEND_WITH_IMM}).
     *
     * @param region    source
     * @param offset    offset in it
     * @param length    bytes
     * @param immediate 32 bits for the peer's completion
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> sendWithImmediateAsync(MemoryRegion region, long offset, int length,
            int immediate) {
        return postSend("send with immediate", NOW_OR_FAIL, (b, id) -> b.sendWithImmediate(id, region, offset, length,
                immediate));
    }

    /**
     * Inline send ({@code IBV_WR_SEND} with {@code IBV_SEND_INLINE}): the bytes are copied into the request
     * now, so {@code data} may be any memory (heap included) and is free to reuse when this returns; nothing
     * is registered or pinned.
     *
     * @param data at most the QP's {@code max_inline_data} bytes
     * @return the future completion
     * @throws IllegalArgumentException if {@code data} is longer than the QP's inline limit
     */
    public CompletableFuture<WorkCompletion> sendInlineAsync(java.lang.foreign.MemorySegment data) {
        RequestEncoder.checkInline(qp, data);
        return postSend("inline send", NOW_OR_FAIL, (b, id) -> b.sendInline(id, data));
    }

    /**
     * Inline RDMA write ({@code IBV_WR_RDMA_WRITE} with {@code IBV_SEND_INLINE}); see {@link #sendInlineAsync}.
     *
     * @param data         at most the QP's {@code max_inline_data} bytes, copied now
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return the future completion
     * @throws IllegalArgumentException if {@code data} is longer than the QP's inline limit
     */
    public CompletableFuture<WorkCompletion> writeInlineAsync(java.lang.foreign.MemorySegment data,
            RemoteRegion remote, long remoteOffset) {
        RequestEncoder.checkInline(qp, data);
        return postSend("inline RDMA write", NOW_OR_FAIL, (b, id) -> b.writeInline(id, data, remote, remoteOffset));
    }

    /**
     * UD send through an address handle.
     *
     * @param region     source
     * @param offset     offset in it
     * @param length     bytes
     * @param ah         route
     * @param remoteQpn  destination QP
     * @param remoteQkey destination Q_Key
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> sendToAsync(MemoryRegion region, long offset, int length,
            AddressHandle ah, int remoteQpn, int remoteQkey) {
        return postSend("UD send", NOW_OR_FAIL, (b, id) -> b.sendTo(id, region, offset, length, ah, remoteQpn,
                remoteQkey));
    }

    /**
     * RDMA write ({@code IBV_WR_RDMA_WRITE}).
     *
     * @param region       source
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> writeAsync(MemoryRegion region, long offset, int length,
            RemoteRegion remote, long remoteOffset) {
        return postSend("RDMA write", NOW_OR_FAIL, (b, id) -> b.write(id, region, offset, length, remote, remoteOffset));
    }

    /**
     * RDMA write with immediate ({@code IBV_WR_RDMA_WRITE_WITH_IMM}).
     *
     * @param region       source
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @param immediate    32 bits for the peer
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> writeWithImmediateAsync(MemoryRegion region, long offset, int length,
            RemoteRegion remote, long remoteOffset, int immediate) {
        return postSend("RDMA write with immediate", NOW_OR_FAIL, (b, id) -> b.writeWithImmediate(id, region, offset, length,
                remote, remoteOffset, immediate));
    }

    /**
     * RDMA read ({@code IBV_WR_RDMA_READ}).
     *
     * @param region       destination
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> readAsync(MemoryRegion region, long offset, int length,
            RemoteRegion remote, long remoteOffset) {
        return postSend("RDMA read", NOW_OR_FAIL, (b, id) -> b.read(id, region, offset, length, remote, remoteOffset));
    }

    /**
     * Atomic compare-and-swap; the old value lands in 8 local bytes.
     *
     * @param region       receives the old value
     * @param offset       offset of 8 bytes
     * @param remote       the peer's region
     * @param remoteOffset aligned target offset
     * @param compare      expected value
     * @param swap         new value
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> compareAndSwapAsync(MemoryRegion region, long offset, RemoteRegion remote,
            long remoteOffset, long compare, long swap) {
        return postSend("compare-and-swap", NOW_OR_FAIL, (b, id) -> b.compareAndSwap(id, region, offset, remote,
                remoteOffset, compare, swap));
    }

    /**
     * Atomic fetch-and-add; the old value lands in 8 local bytes.
     *
     * @param region       receives the old value
     * @param offset       offset of 8 bytes
     * @param remote       the peer's region
     * @param remoteOffset aligned target offset
     * @param add          addend
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> fetchAndAddAsync(MemoryRegion region, long offset, RemoteRegion remote,
            long remoteOffset, long add) {
        return postSend("fetch-and-add", NOW_OR_FAIL, (b, id) -> b.fetchAndAdd(id, region, offset, remote, remoteOffset,
                add));
    }

    /**
     * Posts a receive; the future completes when a message (or write with immediate) consumes it.
     *
     * @param region destination
     * @param offset offset in it
     * @param length bytes
     * @return the future completion
     */
    public CompletableFuture<WorkCompletion> receiveAsync(MemoryRegion region, long offset, int length) {
        return postReceive(NOW_OR_FAIL, region, offset, length);
    }

    /**
     * A stream of incoming messages with back-pressure: {@code slots} receives of {@code slotSize}
     * bytes each, carved from {@code region} at {@code offset}, reposted as the subscriber releases them.
     *
     * @param region   receive memory (needs {@code LOCAL_WRITE})
     * @param offset   where the slots start
     * @param slotSize bytes per message slot
     * @param slots    how many receives to keep posted
     * @return the publisher (posting starts when it is subscribed)
     * @throws IllegalArgumentException if {@code offset} is negative or the range does not fit its region (the
     *                                  message names the argument and the values)
     */
    public ReceiveStream receiveStream(MemoryRegion region, long offset, int slotSize, int slots) {
        return new ReceiveStream(this, region, offset, slotSize, slots);
    }

    /**
     * Posts a chain of send requests with one {@code ibv_post_send} (e.g. an RDMA write followed by a send
     * that tells the peer it is there), under one future: it completes with the completion of the chain's
     * last request, which must be signaled (or the QP {@link QueuePair#signalsAll() signal all}); earlier
     * requests may be unsignaled. The future fails with the first failed request's
     * {@link WorkRequestException} (the rest of the chain is flushed), or with the {@link VerbsException}
     * of a refused post. The wr_ids in the batch are not used (rdma4j's own identify the chain); the batch is
     * unchanged and reusable when this returns. The chain holds one send-queue slot per request until its
     * last request completes; fails at once with {@code ENOMEM} when there is not that much room.
     *
     * <p>If the provider refuses a request in the middle of the chain, the requests before it stay posted:
     * the future fails at once, and their room comes back with the completion of the last posted one (if it
     * is signaled) or when the queue pair is closed or reset.
     *
     * @param batch the chain, at least one request and at most the send queue's capacity
     * @return the future completion of the last request
     * @throws IllegalArgumentException if the batch is empty, longer than the send queue, or its last request
     *                                  is unsignaled on a QP that does not signal all
     */
    public CompletableFuture<WorkCompletion> postAsync(SendBatch batch) {
        return postChain(batch, NOW_OR_FAIL);
    }

    CompletableFuture<WorkCompletion> postChain(SendBatch batch, long roomNanos) {
        int n = batch.count();
        if (n == 0) {
            throw new IllegalArgumentException("an empty batch: nothing would complete the future");
        }
        if (n > qp.capabilities().maxSendWr() || n > 0xffff) {
            throw new IllegalArgumentException("a chain of " + n + " requests is longer than the send queue of "
                    + qp + " (" + qp.capabilities().maxSendWr() + ")");
        }
        if (!qp.signalsAll() && !ACCESS.isSignaled(batch, n - 1)) {
            throw new IllegalArgumentException("the last request of a chain must be signaled: its completion"
                    + " completes the future");
        }
        String what = n == 1 ? "send request" : "chain of " + n + " send requests";
        return post(what, roomNanos, sendRoom, n, () -> {
            CompletableFuture<WorkCompletion> f = new CompletableFuture<>();
            long id = pending.allocate(new PendingRequests.Pending(f, what, sendRoom, n, n - 1));
            if (id < 0) {
                sendRoom.release(n - 1); // noSlot gives one back
                return outcomes.noSlot(f, sendRoom);
            }
            engine.expect(sendHome);
            try {
                ACCESS.postChain(qp, batch, id);
            } catch (VerbsException e) {
                int posted = ACCESS.posted(batch); // 0 when rdma4j refused a request before the post
                if (posted <= 0) {
                    outcomes.fail(id, e);
                } else { // the first `posted` requests are on the device
                    pending.truncate(id, posted - 1);
                    sendRoom.release(n - posted);
                    f.completeExceptionally(e);
                }
            } catch (RuntimeException e) {
                outcomes.fail(id, e);
            }
            return f;
        });
    }

    // ---------------------------------------------------------------- the blocking view

    /**
     * The blocking view without a deadline: each of its operations posts, waits for queue room, and parks the
     * caller until the request completes ({@link BlockingQueuePair}).
     *
     * @return the view
     */
    public BlockingQueuePair blocking() {
        return BlockingQueuePair.of(this, null);
    }

    /**
     * The blocking view whose every call waits at most {@code timeout}, for queue room and for the completion
     * together, then throws {@link WorkRequestTimeoutException} ({@link BlockingQueuePair}).
     *
     * @param timeout not negative; one longer than {@code Long.MAX_VALUE} nanoseconds (about 292 years) is taken as
     *                that: no deadline
     * @return the view
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public BlockingQueuePair blocking(java.time.Duration timeout) {
        return BlockingQueuePair.of(this, java.util.Objects.requireNonNull(timeout, "timeout"));
    }

    // ---------------------------------------------------------------- plumbing

    CompletableFuture<WorkCompletion> postSend(String what, long roomNanos, RequestEncoder encoder) {
        CompletableFuture<WorkCompletion> refused = admit(what, roomNanos, sendRoom, 1);
        return refused != null ? refused : handOut(sendBody(what, encoder));
    }

    private CompletableFuture<WorkCompletion> sendBody(String what, RequestEncoder encoder) {
        CompletableFuture<WorkCompletion> f = new CompletableFuture<>();
        long id = pending.allocate(new PendingRequests.Pending(f, what, sendRoom));
        if (id < 0) {
            return outcomes.noSlot(f, sendRoom);
        }
        engine.expect(sendHome);
        sendLock.lock();
        try {
            send.clear();
            encoder.encode(send, id);
            ACCESS.post(qp, send); // a refusal throws with the QP's reason (e.g. a UD send without address handle)
        } catch (VerbsException | RuntimeException e) {
            outcomes.fail(id, e);
        } finally {
            sendLock.unlock();
        }
        return f;
    }

    CompletableFuture<WorkCompletion> postReceive(long roomNanos, MemoryRegion region, long offset,
            int length) {
        CompletableFuture<WorkCompletion> refused = admit("receive", roomNanos, recvRoom, 1);
        return refused != null ? refused : handOut(receiveBody(region, offset, length));
    }

    private CompletableFuture<WorkCompletion> receiveBody(MemoryRegion region, long offset, int length) {
        CompletableFuture<WorkCompletion> f = new CompletableFuture<>();
        long id = pending.allocate(new PendingRequests.Pending(f, "receive", recvRoom));
        if (id < 0) {
            return outcomes.noSlot(f, recvRoom);
        }
        engine.expect(recvHome);
        recvLock.lock();
        try {
            ACCESS.post(qp, recv.clear().receive(id, region, offset, length));
        } catch (VerbsException | RuntimeException e) {
            outcomes.fail(id, e);
        } finally {
            recvLock.unlock();
        }
        return f;
    }

    /**
     * Takes queue room (now, or waiting up to {@code roomNanos}; {@link #NOW_OR_FAIL} for the async forms)
     * and posts with {@code body}; returns the caller's copy of the request's future.
     */
    private CompletableFuture<WorkCompletion> post(String what, long roomNanos, Semaphore room, int permits,
            java.util.function.Supplier<CompletableFuture<WorkCompletion>> body) {
        CompletableFuture<WorkCompletion> refused = admit(what, roomNanos, room, permits);
        return refused != null ? refused : handOut(body.get());
    }

    /** {@link #post}'s checks and its taking of queue room: null when the request may be posted, else its failure. */
    private CompletableFuture<WorkCompletion> admit(String what, long roomNanos, Semaphore room, int permits) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException(qp + " is closed"));
        }
        if (engine.isClosed()) {
            return CompletableFuture.failedFuture(engine.closedError(qp));
        }
        Throwable b = outcomes.broken();
        if (b != null) {
            return CompletableFuture.failedFuture(new IllegalStateException("the completion queue of " + qp
                    + " failed (" + b.getMessage() + "): nothing would complete the future", b));
        }
        if (roomNanos != NOW_OR_FAIL) {
            engine.refuseBlockingOnEngineThread("AsyncQueuePair's blocking " + what);
            try {
                if (!room.tryAcquire(permits, roomNanos, java.util.concurrent.TimeUnit.NANOSECONDS)) {
                    return CompletableFuture.failedFuture(new BlockingQueuePair.RoomTimeout());
                }
            } catch (InterruptedException e) {
                return CompletableFuture.failedFuture(e);
            }
            if (closed.get()) { // closed while waiting: its teardown may have handed us the room
                room.release(permits);
                return CompletableFuture.failedFuture(new IllegalStateException(qp + " is closed"));
            }
        } else if (!room.tryAcquire(permits)) {
            return CompletableFuture.failedFuture(VerbsException.of(what.equals("receive") ? "ibv_post_recv" : "ibv_post_send",
                    ENOMEM, "queue full: " + what + " on " + qp));
        }
        return null;
    }

    /**
     * The caller's copy of a posted request's future. The room is given back when the request leaves the device's
     * queue (completed, failed to post, flushed), never by the caller: the copy's cancellation changes nothing here.
     */
    private CompletableFuture<WorkCompletion> handOut(CompletableFuture<WorkCompletion> f) {
        outcomes.sweepIfEnded();
        return f.copy();
    }

    /**
     * How many sends (of any kind) can be posted now without waiting: the send queue's capacity less the
     * requests the device still holds. Cancelling a future does not change it; the completion does.
     *
     * @return free send-queue room
     */
    public int sendRoom() {
        return sendRoom.availablePermits();
    }

    /**
     * How many receives can be posted now without waiting (see {@link #sendRoom()}).
     *
     * @return free receive-queue room
     */
    public int receiveRoom() {
        return recvRoom.availablePermits();
    }

    /**
     * Closes the queue pair ({@code ibv_destroy_qp}) and completes every pending future exceptionally
     * with {@link WorkRequestException} ({@code WR_FLUSH_ERR}, "queue pair closed"). Idempotent.
     */
    @Override
    public void close() {
        try {
            qp.close(); // its driver's discarded(true) tears this wrapper down
        } finally {
            tearDown("queue pair closed");
        }
    }

    /** The QP is gone: fail what is pending, free the batches, leave the engine. Idempotent. */
    private void tearDown(String reason) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        outcomes.failPending(reason);
        sendLock.lock();
        try {
            send.close();
        } finally {
            sendLock.unlock();
        }
        recvLock.lock();
        try {
            recv.close();
        } finally {
            recvLock.unlock();
        }
        engine.forget(this);
    }
}
