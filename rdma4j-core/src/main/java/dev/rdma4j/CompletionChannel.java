package dev.rdma4j;

import dev.rdma4j.internal.ffi.EventVerbs;
import dev.rdma4j.internal.ffi.Libc;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A completion channel ({@code struct ibv_comp_channel}, from {@code ibv_create_comp_channel}) whose
 * file descriptor rdma4j makes non-blocking ({@code fcntl O_NONBLOCK}) at once, so it can be watched
 * with epoll and drained with {@link #nextEvent()} without ever blocking a thread. The
 * {@link dev.rdma4j.engine.CompletionEngine} uses it; it is public for applications with their own
 * event loop.
 *
 * <p>Threading: thread-safe. {@link #nextEvent()} is for one reader at a time (the engine thread when an engine
 * owns the channel); never blocks: the fd is non-blocking.
 */
public final class CompletionChannel extends NativeResource {
    private final Context context;
    private final MemorySegment handle;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final EventVerbs.Scratch scratch = new EventVerbs.Scratch(arena);
    /**
     * The CQs reporting here: an array replaced whole at each attach and detach (under {@link #queuesLock}), so that
     * {@link #nextEvent(boolean)} looks an event's CQ up in one consistent snapshot, without allocating (a list read by
     * index while another thread closed a CQ skipped the one after it and called the event unknown).
     */
    private volatile CompletionQueue[] queues = new CompletionQueue[0];
    private final Object queuesLock = new Object();
    /** The thread of the CompletionEngine that drives this channel's CQs, or null. */
    private volatile Thread engine;

    CompletionChannel(Context context) throws VerbsException {
        super("CompletionChannel(" + context.device().name() + ")", context);
        this.context = context;
        MemorySegment ch;
        try {
            ch = ResourceVerbs.createCompChannel(context.handle());
        } catch (NativeException e) {
            arena.close();
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            arena.close();
            abandon();
            throw e;
        }
        this.handle = ch;
        this.fd = EventVerbs.channelFd(ch);
        int rc = Libc.setNonBlocking(fd);
        if (rc < 0) {
            VerbsException failure = VerbsException.of("fcntl", -rc, "O_NONBLOCK on completion channel fd " + fd);
            try {
                ResourceVerbs.destroyCompChannel(ch);
            } catch (NativeException e) {
                failure.addSuppressed(VerbsException.from(e)); // the fcntl failure is the one to report
            } finally {
                arena.close();
                abandon();
            }
            throw failure;
        }
    }

    /**
     * The context the channel belongs to.
     *
     * @return the context
     */
    public Context context() {
        return context;
    }

    /**
     * The channel's file descriptor (non-blocking), readable when a CQ event is pending: register it
     * with epoll edge-triggered and call {@link #nextEvent()} until it returns null.
     *
     * @return the fd
     */
    public int fd() {
        return fd;
    }

    /**
     * Takes the next pending CQ event ({@code ibv_get_cq_event}) without blocking. The CQ counts the
     * event; {@link CompletionQueue#acknowledgeEvents()} acknowledges (in batches), and closing the CQ
     * acknowledges whatever is left, so {@code ibv_destroy_cq} never waits.
     *
     * @return the CQ that has completions to drain (re-arm it), or null when no event is pending
     * @throws VerbsException if the verb fails for another reason than "nothing pending"
     * @throws IllegalStateException if the channel is closed, or a completion engine drives its queues and this is
     *                               not the engine's thread
     */
    public CompletionQueue nextEvent() throws VerbsException {
        return nextEvent(false);
    }

    /**
     * {@link #nextEvent()} for an event loop whose {@code epoll_wait} has just reported {@link #fd()} readable
     * ({@code readable}): the first {@code ibv_get_cq_event} is called without asking {@code poll(2)} first, one
     * system call less per wake-up; the calls that drain the rest ask it ({@code readable} false).
     *
     * @param readable true when the caller's epoll has just reported the fd readable
     * @return the CQ that has completions to drain (re-arm it), or null when no event is pending
     * @throws VerbsException if the verb fails for another reason than "nothing pending"
     * @throws IllegalStateException if the channel is closed, or a completion engine drives its queues and this is
     *                               not the engine's thread
     */
    public CompletionQueue nextEvent(boolean readable) throws VerbsException {
        refuseIfEngines("nextEvent");
        return nextEventForDriver(readable);
    }

    /**
     * A channel an engine drives is the engine's: its events arm and wake that engine, which reads them on its thread
     * (or lends a queue's own channel to the callers that wait on the queue, who read through the driver's path).
     * Read elsewhere, an event would leave the engine believing the queue still armed: its completions would wait.
     */
    private void refuseIfEngines(String call) {
        Thread e = engine;
        if (e != null && e != Thread.currentThread()) {
            throw new IllegalStateException(call + " refused: " + this + " is the CompletionEngine thread "
                    + e.getName() + "'s; reading its events here would steal them from the engine");
        }
    }

    /** {@link #nextEvent(boolean)} without the engine check: the engine's lending of a queue's own channel. */
    synchronized CompletionQueue nextEventForDriver(boolean readable) throws VerbsException {
        acquire(false);
        try {
            long cq = EventVerbs.getCqEvent(handle, fd, readable, scratch);
            if (cq == 0) {
                return null;
            }
            if (cq < 0) {
                throw VerbsException.of("ibv_get_cq_event", (int) -cq, description());
            }
            CompletionQueue[] qs = queues; // one snapshot; an array: no iterator on the engine's path
            for (int i = qs.length - 1; i >= 0; i--) { // newest first: a CQ made at a destroyed one's address, still
                CompletionQueue q = qs[i];            // listed until its destroy returns, is the event's
                if (q.handle().address() == cq) {
                    q.eventReceived();
                    return q;
                }
            }
            throw new IllegalStateException("event for a CQ unknown to " + description());
        } finally {
            release(false);
        }
    }

    /**
     * Waits for the next CQ event, like a blocking {@code ibv_get_cq_event}: {@code poll(2)} on the fd, then
     * {@link #nextEvent()}. For the synchronous API without an engine: arm the CQ
     * ({@link CompletionQueue#requestNotification(boolean)}), poll it once more, then wait here (or let
     * {@link CompletionQueue#await(WorkCompletions, java.time.Duration)} do all of it). The calling thread
     * blocks in the kernel in slices of at most 50 ms, between which it notices an interrupt or a close; a
     * virtual thread pins its carrier meanwhile (an engine serves many waiters better).
     *
     * @param timeout the longest wait (not negative; longer than {@code Long.MAX_VALUE} nanoseconds, about 292
     *                years, is taken as that)
     * @return the CQ that has an event (counted; acknowledge it), or null at the timeout
     * @throws VerbsException if {@code ibv_get_cq_event} or {@code poll} fails
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalStateException if the channel is closed (also while waiting), a completion engine drives its
     *                               queues, or this is a completion
     *                               engine's thread
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public CompletionQueue awaitEvent(java.time.Duration timeout) throws VerbsException, InterruptedException {
        long budget = nanos(timeout);
        dev.rdma4j.internal.EngineThreads.refuseBlocking("CompletionChannel.awaitEvent");
        refuseIfEngines("awaitEvent");
        long start = System.nanoTime();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pollfd = a.allocate(Libc.POLLFD);
            for (;;) {
                CompletionQueue cq = nextEvent();
                if (cq != null) {
                    return cq;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("awaitEvent on " + description());
                }
                long left = budget - (System.nanoTime() - start);
                if (left <= 0) {
                    return null;
                }
                int ms = (int) Math.min(50, Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left)));
                int rc = pollReadable(ms, pollfd); // the fd stays open while we wait on it
                if (rc < 0 && -rc != Libc.EINTR) {
                    throw VerbsException.of("poll", -rc, description());
                }
            }
        }
    }

    /**
     * {@code poll(2)} on the fd for at most {@code ms}, the fd kept open meanwhile (a close waits for the return):
     * the sleep of a caller that waits on a channel of its own CQ's. One thread at a time per {@code pollfd}.
     *
     * @return 1 when readable, 0 at the timeout, or -errno
     * @throws IllegalStateException if the channel is closed or closing
     */
    int pollReadable(int ms, MemorySegment pollfd) {
        acquire(false);
        try {
            return Libc.poll(fd, Libc.POLLIN, ms, pollfd);
        } finally {
            release(false);
        }
    }

    /**
     * {@code epoll_ctl(epfd, op, fd, EPOLLIN | EPOLLET)} with {@code id} as the event's data, the fd kept open
     * meanwhile: an engine lending the channel to a waiting caller, or taking it back.
     *
     * @return 0 or -errno
     * @throws IllegalStateException if the channel is closed or closing
     */
    int epollCtl(int epfd, int op, long id, MemorySegment scratch) {
        acquire(false);
        try {
            return Libc.epollCtl(epfd, op, fd, Libc.EPOLLIN | Libc.EPOLLET, id, scratch);
        } finally {
            release(false);
        }
    }

    /** See {@link dev.rdma4j.internal.Timeouts}: negative refused, longer than {@code Long.MAX_VALUE} ns clamped. */
    static long nanos(java.time.Duration timeout) {
        return dev.rdma4j.internal.Timeouts.nanos(timeout);
    }

    /** A CompletionEngine drives this channel's CQs: the channel is the engine's, not the application's. */
    void drivenBy(Thread engineThread) {
        engine = engineThread;
    }

    /**
     * An engine's channel with no CQ left: nothing will ever arrive on it, and its context may close it (the
     * engine opens a new one when it needs one for the context again).
     */
    boolean isIdleEngineChannel() {
        return engine != null && childCount() == 0;
    }

    @Override
    String label() {
        Thread e = engine;
        return description() + (e != null ? " of the CompletionEngine thread " + e.getName() : "") + " with "
                + queues.length + " CQ(s)";
    }

    void attach(CompletionQueue cq) {
        synchronized (queuesLock) {
            CompletionQueue[] q = java.util.Arrays.copyOf(queues, queues.length + 1);
            q[q.length - 1] = cq;
            queues = q;
        }
    }

    void detach(CompletionQueue cq) {
        synchronized (queuesLock) {
            CompletionQueue[] q = queues;
            for (int i = 0; i < q.length; i++) {
                if (q[i] == cq) {
                    CompletionQueue[] rest = new CompletionQueue[q.length - 1];
                    System.arraycopy(q, 0, rest, 0, i);
                    System.arraycopy(q, i + 1, rest, i, q.length - i - 1);
                    queues = rest;
                    return;
                }
            }
        }
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    void destroy() {
        try {
            ResourceVerbs.destroyCompChannel(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        } finally {
            arena.close();
        }
    }
}
