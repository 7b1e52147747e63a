package dev.rdma4j.net;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.VerbsException;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.WorkRequestException;
import dev.rdma4j.internal.Timeouts;
import dev.rdma4j.internal.jfr.Flight;
import dev.rdma4j.net.protocol.Credits;
import dev.rdma4j.net.protocol.SendSlots;
import dev.rdma4j.net.protocol.Staging;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The sending side of an {@link RdmaConnection} and its half of the protocol ({@code dev.rdma4j.net.protocol}): a
 * message is copied into a free send buffer ({@link SendSlots}) and posted, in call order, when the peer has granted a
 * receive for it ({@link Credits}); beyond the buffers a copy waits its turn. Receives this side posts again are
 * granted to the peer in the immediate of the next message, or of a message of credits only when the peer may be out.
 *
 * <p>Threading: thread-safe: the protocol's state is guarded by one lock, taken by senders, by the thread that
 * dispatches the connection's completions, and by whoever gives a message's buffer back.
 */
final class Outbox {
    /** The tag bit of a send (a receive's tag is its buffer's index). */
    static final long SEND = 1L << 32;
    /** The tag of a message of credits only. */
    private static final long CREDIT = SEND | 1L << 33;
    /** What {@link #sendOrWait} returns for a message not sent (compared by identity; never completed). */
    static final CompletableFuture<Void> NOT_SENT = new CompletableFuture<>();

    private final CompletionEngine engine;
    private final String name;
    private final int size;
    /** This side's data receives: granted once at {@link #start}, again as each is posted again. */
    private final int dataReceives;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when {@link #unacknowledged} drops to 0, for the close's linger. */
    private final Condition allAcknowledged = lock.newCondition();
    private final Credits credits;
    private final SendSlots slots;
    private final int[] lengths;
    /**
     * The future of the send in each buffer: {@code sendAsync}'s, or a blocking send's that waited for a buffer; null
     * for a send that {@code send} returned for (counted in {@link #unacknowledged}).
     */
    private final CompletableFuture<Void>[] inFlight;
    /** Sends waiting for a buffer, in call order. */
    private final ArrayDeque<PendingSend> pending = new ArrayDeque<>();
    /** Sends that {@code send} returned for, not yet acknowledged (staged or in flight). */
    private int unacknowledged;
    /** Sends in a buffer with a future (written under the lock). */
    private volatile int futureSends;
    /** A send that failed other than by a flush, or a post that failed: the connection failed because of it. */
    private volatile Throwable failure;
    /** Futures failed under the lock, completed after it (a failure's rare path; null otherwise). */
    private volatile List<Failed> toFail;
    /** Whether this side's receives were granted: credit messages may go. */
    private boolean started;
    /** Why nothing more is posted (a post or a request failed, the peer left, the close is past its linger), or null. */
    private Throwable stopped;
    private MemoryRegion region;
    private AsyncQueuePair aq;
    /** Counters (under the lock): messages and bytes copied and sent, sends that waited for a buffer, stalls. */
    private long messagesSent;
    private long bytesSent;
    private long sendsQueued;
    private long creditStalls;
    /** Data receives posted again as the application gave their messages back: a message's buffer returned. */
    private long buffersReturned;
    /** Whether staged messages wait for a credit (under the lock); the JFR event of the stall, if recorded. */
    private boolean stalled;
    private Object stall;
    private CompletionQueue sendCq;

    /** A send waiting for a buffer. */
    private record PendingSend(MemorySegment data, CompletableFuture<Void> result) {
    }

    private record Failed(CompletableFuture<Void> result, Throwable cause) {
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    Outbox(CompletionEngine engine, String name, int size, int sendBuffers, int dataReceives) {
        this.engine = engine;
        this.name = name;
        this.size = size;
        this.dataReceives = dataReceives;
        this.credits = new Credits(dataReceives);
        this.slots = new SendSlots(sendBuffers);
        this.lengths = new int[sendBuffers];
        this.inFlight = new CompletableFuture[sendBuffers];
    }

    /** The send buffers, and the queue pair's driver: before anything is sent. */
    void attach(MemoryRegion sendRegion, AsyncQueuePair driver, CompletionQueue cq) {
        this.region = sendRegion;
        this.aq = driver;
        this.sendCq = cq;
    }

    /** Connected (the queue pair sends): grants the peer this side's data receives, all posted. */
    void start() {
        lock.lock();
        try {
            for (int i = 0; i < dataReceives; i++) {
                credits.reposted(true);
            }
            started = true;
            pump();
        } finally {
            lock.unlock();
        }
        finish();
    }

    Throwable failure() {
        return failure;
    }

    int futureSends() {
        return futureSends;
    }

    /** {@code RdmaConnection.sendAsync}, the message's size checked and the connection open. */
    CompletableFuture<Void> sendAsync(MemorySegment data) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        lock.lock();
        try {
            if (stopped != null) {
                result.completeExceptionally(stopped);
                return result;
            }
            if (!slots.hasFree() || !pending.isEmpty()) {
                sendsQueued++;
                pending.add(new PendingSend(copyOf(data), result));
                return result;
            }
            int slot = fill(data); // throws if the caller's memory is gone
            inFlight[slot] = result;
            futureSends++;
            engine.expect(sendCq); // a blocking receiver may have borrowed the CQ's channel: taken back, or it wakes
            postFilled();
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        } finally {
            lock.unlock();
        }
        finish();
        return result;
    }

    /**
     * {@code RdmaConnection.send}: copies {@code data} into a free buffer (posted now or when a credit comes) and
     * returns null, or, with every buffer taken, queues a copy and returns the future of its acknowledgement. Returns
     * {@link #NOT_SENT} when sending had stopped or a failure was recorded (the caller reports it; after the peer
     * left, the message is lost, as a socket's write after the peer's end returns) or this call's post failed at
     * once; never for a failure that a completion reports after the post, which is the next call's to report.
     */
    CompletableFuture<Void> sendOrWait(MemorySegment data) {
        lock.lock();
        try {
            // failure too: sent() records a failed completion before it takes the lock to stop sending, and a message
            // posted in between would return as if sent, and come back flushed, nothing reporting the failure
            if (stopped != null || failure != null) {
                return NOT_SENT;
            }
            if (slots.hasFree() && pending.isEmpty()) {
                int slot = fill(data);
                inFlight[slot] = null;
                unacknowledged++;
                postFilled();
                // stopped changes under this lock only: set now, it is this post's failure (or the pump's after it)
                return stopped != null ? NOT_SENT : null; // else its failure is the next call's; the close waits
            }
            CompletableFuture<Void> f = new CompletableFuture<>();
            sendsQueued++;
            pending.add(new PendingSend(copyOf(data), f));
            return f;
        } finally {
            lock.unlock();
            finish();
        }
    }

    /** Copies {@code data} into the next free buffer (lock held); on a failed copy the buffer stays free. */
    private int fill(MemorySegment data) {
        int slot = slots.fill();
        try {
            MemorySegment.copy(data, 0, region.segment(), (long) slot * size, data.byteSize());
        } catch (RuntimeException e) {
            slots.unfill();
            throw e;
        }
        lengths[slot] = (int) data.byteSize();
        messagesSent++;
        bytesSent += data.byteSize();
        return slot;
    }

    private static MemorySegment copyOf(MemorySegment data) {
        return MemorySegment.ofArray(new byte[(int) data.byteSize()]).copyFrom(data);
    }

    /**
     * Waits for {@code f} dispatching {@code cq}'s completions on this thread, no wake-up or hand-off: polling with
     * {@code busyPoll} ({@link CompletionEngine#pollWhileWaiting}), else asleep on the CQ's own channel
     * ({@link CompletionEngine#blockWhileWaiting}). Returns what is left of {@code timeout} for the usual wait,
     * which takes over when {@code f} is not done (the deadline, another thread waits on the channel, or the
     * queue closed).
     */
    Duration waitHere(CompletableFuture<?> f, Duration timeout, boolean busyPoll, RdmaConnection connection) {
        CompletionQueue cq = sendCq;
        if (cq == null || f.isDone()) {
            return timeout;
        }
        long start = System.nanoTime();
        long nanos = Timeouts.nanos(timeout);
        try {
            if (busyPoll) {
                engine.pollWhileWaiting(cq, f, nanos);
            } else {
                engine.blockWhileWaiting(cq, f::isDone, nanos);
                connection.expectIfAwaited(cq);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the wait below sees it, and cancels f as it would have
        } catch (IllegalArgumentException | IllegalStateException closedMeanwhile) {
            // the queue was closed (the engine forgot it) or the engine is closing: the wait below fails
        }
        return Duration.ofNanos(Math.max(0, nanos - (System.nanoTime() - start)));
    }

    /** Takes a send that waits for a buffer out of the queue: true if it was there (so never sent). */
    boolean dropPending(CompletableFuture<Void> result) {
        lock.lock();
        try {
            return pending.removeIf(p -> p.result() == result);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A buffer was just filled (lock held): posted at once when it is the only one staged and a data credit is held,
     * the common case, without {@link #pump}'s loops (whose compiled form would inline the whole post into every
     * caller); else staged for the pump, which keeps the order.
     */
    private void postFilled() {
        if (Staging.postsAtOnce(slots, credits)) {
            if (!postOldest() || !credits.creditMessageDue()) {
                return; // the immediate took every grant owed (as it does unless more than it holds are)
            }
        }
        pump();
    }

    /** Posts the oldest staged buffer on a data credit (lock held): false if the post failed (nothing more goes). */
    private boolean postOldest() {
        int slot = slots.post();
        credits.spendData();
        Throwable e = post((long) slot * size, lengths[slot], SEND | slot, credits.takeGrants(0));
        if (e != null) {
            broke(slot, e);
            return false;
        }
        return true;
    }

    /**
     * Posts what the credits allow (lock held): waiting copies into free buffers, staged buffers in order, then
     * a message of credits only if the peer may be out of them. Allocates nothing.
     */
    private void pump() {
        while (stopped == null && !pending.isEmpty() && slots.hasFree()) {
            PendingSend p = pending.poll();
            int slot = fill(p.data()); // a copy on the heap: cannot fail
            inFlight[slot] = p.result();
            futureSends++;
            engine.expect(sendCq);
        }
        while (stopped == null && slots.hasStaged() && credits.canSendData()) {
            if (!postOldest()) {
                return;
            }
        }
        if (started && stopped == null && credits.creditMessageDue()) {
            int spend = credits.spendMark(false);
            if (spend >= 0) {
                Throwable e = post(0, 0, CREDIT, credits.takeGrants(spend));
                if (e != null) {
                    broke(-1, e);
                }
            }
        }
        if (stopped == null && slots.hasStaged() != stalled) {
            stallChanged();
        }
    }

    /**
     * Staged messages began to wait for the peer's credits, or no longer wait (lock held): counted, and a JFR
     * event of the stall when a recording asks for it.
     */
    private void stallChanged() {
        stalled = !stalled;
        if (stalled) {
            creditStalls++;
            stall = Flight.on ? Flight.stallStarted() : null;
        } else if (stall != null) {
            Flight.stallEnded(stall, name, 0, stopped != null);
            stall = null;
        }
    }

    /** Posts one message, solicited (the peer's blocking receiver sleeps for those only): null once posted. */
    private Throwable post(long offset, int length, long tag, int immediate) {
        try {
            if (aq.sendTagged(region, offset, length, tag, true, immediate)) {
                return null;
            }
            // the send queue has room for every buffer and more: full means a caller's own requests took it
            return new IOException("the send queue of " + name + " is full: requests posted on asyncQueuePair() took"
                    + " the send buffers' room");
        } catch (VerbsException | RuntimeException e) { // the connection is closing, or the queue pair failed
            return e;
        }
    }

    /**
     * A post failed (lock held): the connection failed; that send, the staged ones and the waiting ones fail with
     * {@code e} (their futures after the lock), nothing more is posted.
     */
    private void broke(int slot, Throwable e) {
        if (failure == null) {
            failure = e;
        }
        if (slot >= 0) {
            abandon(slot, e);
        }
        abandonAll(e);
    }

    /** Fails the staged sends and those waiting for a buffer with {@code cause} (lock held); nothing more goes. */
    private void abandonAll(Throwable cause) {
        if (stopped == null) {
            stopped = cause;
        }
        if (stalled) {
            stallChanged();
        }
        while (slots.hasStaged()) {
            abandon(slots.post(), cause);
        }
        failPending(cause);
    }

    private void failPending(Throwable cause) {
        for (PendingSend p; (p = pending.poll()) != null;) {
            failLater(p.result(), cause);
        }
    }

    /** Buffer {@code slot} (posted, or taken out of the staged ones) will never be sent. */
    private void abandon(int slot, Throwable cause) {
        CompletableFuture<Void> result = inFlight[slot];
        inFlight[slot] = null;
        slots.done(slot);
        if (result == null) {
            acknowledged();
        } else {
            futureSends--;
            failLater(result, cause);
        }
    }

    private void failLater(CompletableFuture<Void> result, Throwable cause) {
        List<Failed> l = toFail;
        if (l == null) {
            toFail = l = new ArrayList<>();
        }
        l.add(new Failed(result, cause));
    }

    private void acknowledged() {
        if (--unacknowledged == 0) {
            allAcknowledged.signalAll();
        }
    }

    /** After the lock: completes the futures failed under it (one volatile read when there are none). */
    private void finish() {
        if (toFail != null) { // small enough for C1 to inline: the failure's path is a call of its own
            completeFailed();
        }
    }

    private void completeFailed() {
        List<Failed> l;
        lock.lock();
        try {
            l = toFail;
            toFail = null;
        } finally {
            lock.unlock();
        }
        if (l != null) {
            l.forEach(f -> complete(f.result(), f.cause()));
        }
    }

    /**
     * The send tagged {@code tag} completed, or failed ({@code e}) (where completions are dispatched): completes its
     * future, or counts the acknowledgement of a send that {@code send} returned for, and posts what waited for the
     * buffer.
     */
    void sent(long tag, Throwable e) {
        boolean broken = e instanceof WorkRequestException && !Inbox.isFlush(e);
        if (broken && failure == null) {
            failure = e; // the queue pair went to ERROR because of this: its receives flush next
        }
        if (tag == CREDIT) {
            if (broken) {
                stop(e);
            }
            return;
        }
        int slot = (int) tag;
        CompletableFuture<Void> result;
        lock.lock();
        try {
            if (broken) {
                abandonAll(e); // nothing more goes: the staged and waiting sends fail with it
            }
            result = inFlight[slot];
            inFlight[slot] = null;
            if (result == null) {
                acknowledged();
            } else {
                futureSends--;
            }
            slots.done(slot);
            if (!pending.isEmpty()) { // a freed buffer changes nothing else: the credits are as they were
                pump();
            }
        } finally {
            lock.unlock();
        }
        if (result != null) {
            complete(result, e);
        }
        finish();
    }

    /**
     * A message of the peer arrived with {@code imm}: its credits are this side's (and may post what waited for
     * them); {@code controlReposted} when its receive was a control one, posted again at once.
     */
    void received(int imm, boolean controlReposted) {
        lock.lock();
        try {
            credits.received(imm);
            if (controlReposted) {
                credits.reposted(false);
            }
            if (Staging.mayPostAfterArrival(slots, credits)) {
                pump();
            }
        } finally {
            lock.unlock();
        }
        finish();
    }

    /** A data receive was posted again (the application gave its buffer back): a credit for the peer. */
    void reposted() {
        lock.lock();
        try {
            credits.reposted(true);
            buffersReturned++;
            if (Staging.mayPostAfterRelease(credits)) {
                pump();
            }
        } finally {
            lock.unlock();
        }
        finish();
    }

    /** A message's buffer of the server's shared queue came back after this connection closed: counted only. */
    void returnedAfterClose() {
        lock.lock();
        try {
            buffersReturned++;
        } finally {
            lock.unlock();
        }
    }

    /** The close: the sends waiting for a buffer fail with {@code cause}. */
    void failWaiting(Throwable cause) {
        lock.lock();
        try {
            failPending(cause);
        } finally {
            lock.unlock();
        }
        finish();
    }

    /**
     * Waits, at most {@code timeout}, until the sends that {@code send} returned for were acknowledged, so that they
     * reach the peer before the disconnect (a socket's linger); not when the peer is gone or the engine closed.
     */
    void linger(Duration timeout, BooleanSupplier peerGone) {
        long left = Timeouts.nanos(timeout);
        lock.lock();
        try {
            while (unacknowledged > 0 && left > 0 && !peerGone.getAsBoolean() && !engine.isClosed()) {
                // a tenth of a second at a time: the peer's leaving and the engine's end signal nothing here
                long step = Math.min(left, TimeUnit.MILLISECONDS.toNanos(100));
                left -= step - Math.max(0, allAcknowledged.awaitNanos(step));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the close goes on without the linger
        } finally {
            lock.unlock();
        }
    }

    /**
     * Nothing more is posted (the close past its linger, the peer gone, the queue pair failed): staged sends and those
     * waiting for a buffer fail with {@code cause}, later ones too ({@code send} returns).
     */
    void stop(Throwable cause) {
        lock.lock();
        try {
            abandonAll(cause);
        } finally {
            lock.unlock();
        }
        finish();
    }

    /**
     * The sending side's counters, with {@code received}, the data messages the inbox took, made one snapshot;
     * {@code lent} the buffers lent now, or -1: those received less those returned here.
     */
    ConnectionCounters counters(long received, long bytesReceived, int lent) {
        lock.lock();
        try {
            return new ConnectionCounters(messagesSent, bytesSent, sendsQueued, creditStalls, received, bytesReceived,
                    lent >= 0 ? lent : (int) Math.max(0, received - buffersReturned));
        } finally {
            lock.unlock();
        }
    }

    static void complete(CompletableFuture<Void> result, Throwable e) {
        if (e == null) {
            result.complete(null);
            return;
        }
        Throwable cause = e instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                ? c.getCause() : e;
        result.completeExceptionally(cause);
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return name + ": " + credits + ", " + slots + ", " + pending.size() + " waiting for a buffer";
        } finally {
            lock.unlock();
        }
    }
}
