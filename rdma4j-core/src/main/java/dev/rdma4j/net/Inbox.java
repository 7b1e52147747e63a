package dev.rdma4j.net;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ReceivePool;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.RequestHandler;
import dev.rdma4j.engine.WorkRequestException;
import dev.rdma4j.net.protocol.Immediate;
import dev.rdma4j.internal.Timeouts;
import dev.rdma4j.internal.jfr.Flight;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The receiving side of an {@link RdmaConnection}: its receive buffers, posted and posted again (each a credit for
 * the peer, through the {@link Outbox}), the completions of its requests; messages delivered in the order they arrived, to the receivers that
 * wait (futures, or blocking callers that poll the connection's CQ themselves), else kept until taken; and the end of
 * receiving (the peer's close, a failure, this side's close).
 *
 * <p>Threading: thread-safe. Messages are delivered where the connection's completions are dispatched; receivers call
 * from any thread (the blocking ones never from the engine's).
 */
final class Inbox {
    private final RdmaConnection connection;
    private final CompletionEngine engine;
    private final RdmaOptions options;
    private final String name;
    private final ReentrantLock lock = new ReentrantLock();
    /** Received, not yet taken (guarded by lock); non-empty only while {@link #waiters} is empty. */
    private final ArrayDeque<Message> inbox = new ArrayDeque<>();
    /** {@link #inbox}'s size, for a busy-polling receiver's look without the lock (written under it). */
    private volatile int queued;
    private final ArrayDeque<CompletableFuture<Message>> waiters = new ArrayDeque<>();
    /** {@link #waiters}' size, for a look without the lock (written under it). */
    private volatile int awaited;
    /** Signalled when a message goes to the inbox while a blocking receiver waits, and when receiving ends. */
    private final Condition arrived = lock.newCondition();
    /** Blocking receivers waiting on {@link #arrived} (guarded by lock). */
    private volatile int sleepers;
    /** Why receiving ended, once it did (written under lock). */
    private volatile Throwable ended;
    /** Whether this side closed (written under lock): no message is kept from then on. */
    private volatile boolean closed;
    /** Whether a blocking receiver may stop polling: a message, the end, or the close (made once). */
    private final BooleanSupplier receivable = this::receivable;

    /** Gives a delivered message's buffer back ({@link #repost}); made once. */
    private final Message.Release reposter = this::repost;
    /** Gives a delivered message's buffer back to the server's pool, and grants it; made once. */
    private volatile Message.Release sharedReleaser;
    /** The close is past its linger: receives are no longer posted again, even control ones. */
    private volatile boolean tearingDown;
    private final int size;
    private Outbox outbox;
    private AsyncQueuePair aq;
    private MemoryRegion recvRegion;
    /** Whether the connection was established ({@link #start}). */
    private volatile boolean established;
    /** Data messages received and their bytes (where completions are dispatched, one thread at a time). */
    private long messagesReceived;
    private long bytesReceived;
    /** A read-only view of each receive buffer: a message's is a slice of it (one object, not two). */
    private MemorySegment[] receiveViews;
    /** The data buffers of the connection's own receive queue lent to messages (null on a shared queue). */
    private DryWatch watch;

    Inbox(RdmaConnection connection, CompletionEngine engine, RdmaOptions options, String name) {
        this.connection = connection;
        this.engine = engine;
        this.options = options;
        this.name = name;
        this.size = options.messageSize();
    }

    /** The receive buffers of a connection's own receive queue ({@code region}: each {@code size}), or none. */
    void buffers(MemoryRegion region) {
        recvRegion = region;
        int receives = (int) (region.length() / size);
        receiveViews = new MemorySegment[receives];
        for (int i = 0; i < receives; i++) {
            receiveViews[i] = region.segment().asSlice((long) i * size, size).asReadOnly();
        }
        // the credits keep the peer from sending to a queue without a posted receive (no RNR): running dry here
        // makes the peer's sends wait for a credit, the protocol's back-pressure, so it is logged at DEBUG only
        watch = new DryWatch("the receive queue of the connection " + name, "its peer's sends wait for a credit",
                options.receiveBuffers(), false);
    }

    /** With the queue pair driven: posts every receive buffer (of the connection's own receive queue). */
    void attach(AsyncQueuePair driver, Outbox sends) {
        aq = driver;
        outbox = sends;
        for (int i = 0; receiveViews != null && i < receiveViews.length; i++) {
            postReceive(i);
        }
    }

    /** The close is past its linger: no receive is posted again. */
    void tearDown() {
        tearingDown = true;
    }

    /** Established: the send side grants the peer this side's receives; a JFR event if a recording asks for one. */
    void start() {
        established = true;
        outbox.start();
        if (Flight.on) {
            Flight.established(name, null, String.valueOf(connection.peerAddress()), options.exchange().name(),
                    aq.queuePair().qpNumber());
        }
    }

    /** The connection's counters: the send side's, and the messages taken here. */
    ConnectionCounters counters() {
        Outbox out = outbox;
        DryWatch own = watch; // exact for a connection's own queue; a shared queue's are counted by the outbox
        return out == null ? new ConnectionCounters(0, 0, 0, 0, 0, 0, 0)
                : out.counters(messagesReceived, bytesReceived, own == null ? -1 : own.lentNow());
    }

    /** Why receiving ended, or null while it goes on. */
    Throwable ended() {
        return ended;
    }

    /** Futures waiting for a message. */
    int awaited() {
        return awaited;
    }

    /** A message arrived (where completions are dispatched): to the oldest waiting receiver, else kept. */
    void deliver(Message m) {
        for (;;) {
            CompletableFuture<Message> f;
            lock.lock();
            try {
                if (closed) {
                    f = null;
                } else {
                    f = waiters.poll();
                    awaited = waiters.size();
                    if (f == null) {
                        inbox.add(m);
                        queued = inbox.size();
                        if (sleepers > 0) {
                            arrived.signal();
                        }
                        return;
                    }
                }
            } finally {
                lock.unlock();
            }
            if (f == null) {
                m.close(); // closing: give the buffer back (a shared pool keeps it)
                return;
            }
            if (f.complete(m)) {
                return;
            }
            // that receiver gave up (cancelled, timed out): the next one, or the inbox, takes the message
        }
    }

    /** Receiving ends with {@code cause} (the first cause stays): the waiting receivers fail with it. */
    void end(Throwable cause) {
        List<CompletableFuture<Message>> failed;
        lock.lock();
        try {
            if (ended == null) {
                ended = cause;
            }
            failed = new ArrayList<>(waiters);
            waiters.clear();
            awaited = 0;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        for (CompletableFuture<Message> f : failed) {
            f.completeExceptionally(ended);
        }
    }

    /** Posts buffer {@code slot} to receive into, tagged with its index (no object made per message): true if posted. */
    private boolean postReceive(int slot) {
        try {
            if (aq.receiveTagged(recvRegion, (long) slot * size, size, slot)) {
                return true;
            }
            // the receive queue holds one request per buffer: full means a caller posted receives of its own
            end(new IOException("the receive queue of " + name + " is full: a receive of the caller's"
                    + " took a buffer's place (post sends, writes, reads and atomics on asyncQueuePair())"));
        } catch (VerbsException | RuntimeException e) {
            end(receiveFailure(e));
        }
        return false;
    }

    /**
     * The connection's sends and receives complete here (the thread that dispatches them: the engine's, or a
     * caller's that busy-polls): tagged with their buffer's index, a send's with {@link Outbox#SEND} too.
     */
    final class Requests implements RequestHandler {
        @Override
        public void onCompletion(long tag, WorkCompletions batch, int index) {
            if ((tag & Outbox.SEND) != 0) {
                outbox.sent(tag, batch.isSuccess(index) ? null : new WorkRequestException("send", batch.get(index)));
            } else if (batch.isSuccess(index)) {
                received((int) tag, batch.hasImmediate(index) ? batch.immediateData(index) : 0,
                        batch.byteLength(index));
            } else {
                failed(new WorkRequestException("receive", batch.get(index)));
            }
        }

        @Override
        public void onFailure(long tag, WorkRequestException reason) {
            if ((tag & Outbox.SEND) != 0) {
                outbox.sent(tag, reason);
            } else {
                failed(reason);
            }
        }
    }

    /**
     * A receive failed: receiving ends, and so does sending (the queue pair is in ERROR: no credit comes any more, the
     * sends waiting for one fail).
     */
    private void failed(Throwable e) {
        Throwable why = receiveFailure(e);
        if (Flight.on && !(why instanceof EOFException) && !(why instanceof AsynchronousCloseException)) {
            Flight.failed(name, String.valueOf(connection.peerAddress()), "established", why);
        }
        end(why);
        outbox.stop(why);
    }

    /**
     * A message arrived in receive buffer {@code slot}: its credits are taken; a message of credits only gives its
     * buffer back at once (while the connection lingers too: the peer's credits may still be needed), a data message
     * is delivered.
     */
    private void received(int slot, int imm, int length) {
        if (!Immediate.isData(imm)) {
            outbox.received(imm, !tearingDown && postReceive(slot));
            return;
        }
        outbox.received(imm, false);
        messagesReceived++;
        bytesReceived += length;
        watch.lent();
        deliver(new Message(reposter, slot, receiveViews[slot].asSlice(0, length)));
    }

    /** A receive of the shared queue, for this connection (engine thread). */
    void receivedShared(RdmaServer.SharedReceive from, WorkCompletion wc) {
        ReceivePool pool = from.pool();
        if (!wc.isSuccess()) {
            pool.release(wc.wrId());
            failed(new WorkRequestException("receive", wc));
            return;
        }
        int imm = wc.hasImmediate() ? wc.immediateData() : 0;
        if (!Immediate.isData(imm)) {
            pool.release(wc.wrId());
            outbox.received(imm, !tearingDown);
            return;
        }
        outbox.received(imm, false);
        Message.Release r = sharedReleaser;
        if (r == null) { // the first message: a release that also grants the buffer to this connection's peer
            Message.Release release = from.release();
            sharedReleaser = r = id -> {
                release.release(id);
                if (!connection.isClosed()) {
                    outbox.reposted();
                } else {
                    outbox.returnedAfterClose(); // counted all the same: no longer lent
                }
            };
        }
        messagesReceived++;
        bytesReceived += wc.byteLength();
        from.lend();
        deliver(new Message(r, wc.wrId(), pool.buffer(wc.wrId()).asSlice(0, wc.byteLength())));
    }

    private void repost(long slot) {
        watch.returned();
        if (ended != null || connection.isClosed()) {
            return; // the queue pair is going away: nothing to receive into
        }
        if (postReceive((int) slot)) {
            outbox.reposted();
        }
    }

    private Throwable receiveFailure(Throwable e) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                ? e.getCause() : e;
        if (connection.isClosed()) {
            AsynchronousCloseException c = new AsynchronousCloseException();
            c.initCause(cause);
            return c;
        }
        Throwable failed = outbox.failure();
        if (failed != null) {
            return new IOException("the connection " + name + " failed", failed);
        }
        // flushed with no failure of this side: the queue pair went to ERROR because the peer disconnected
        // (possibly before this side recorded its connection)
        if (connection.peerGone() || isFlush(cause)) {
            return new EOFException("the peer closed the connection " + name);
        }
        return new IOException("receiving on " + name + " failed", cause);
    }

    static boolean isFlush(Throwable e) {
        return e instanceof WorkRequestException w && w.status() == dev.rdma4j.WcStatus.WR_FLUSH_ERR;
    }

    /** This side closes: the messages not taken go back, blocking receivers wake, waiting ones fail. */
    void close() {
        if (Flight.on && established) {
            ConnectionCounters n = counters();
            Flight.closed(name, String.valueOf(connection.peerAddress()), connection.peerGone(), n.messagesSent(),
                    n.messagesReceived());
        }
        List<Message> left;
        lock.lock();
        try {
            closed = true;
            left = new ArrayList<>(inbox);
            inbox.clear();
            queued = 0;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        left.forEach(Message::close);
        end(new AsynchronousCloseException());
    }

    /** {@link RdmaConnection#receiveAsync()}, the connection open. */
    CompletableFuture<Message> receiveAsync(CompletionQueue recvCq) {
        CompletableFuture<Message> f;
        lock.lock();
        try {
            Message m = inbox.poll();
            if (m != null) {
                queued = inbox.size();
                return CompletableFuture.completedFuture(m);
            }
            if (ended != null) {
                return CompletableFuture.failedFuture(ended);
            }
            if (!waiters.isEmpty()) {
                waiters.removeIf(CompletableFuture::isDone); // waits given up (timed out, cancelled)
            }
            f = new CompletableFuture<>();
            waiters.add(f);
            awaited = waiters.size();
        } finally {
            lock.unlock();
        }
        engine.expect(recvCq); // a blocking receiver may have borrowed the CQ's channel: the engine takes it back
        return f;
    }

    /** {@link RdmaConnection#receive(Duration)}, its checks passed ({@code timeout} clamped). */
    Message receive(Duration timeout, CompletionQueue recvCq) throws IOException, InterruptedException {
        long nanos = Timeouts.nanos(timeout);
        // no future: the caller waits for the inbox itself, polling the CQ (busy) or on a condition the engine's
        // delivery signals, so a message costs no object beyond itself
        // the clock is read once the inbox was found empty, and then only after a wait: a receive that waits once
        // reads it once here (each read is a system clock's, ~130 user instructions under the emulator)
        long start = 0;
        for (boolean first = true;; first = false) {
            Message m = take();
            if (m != null) {
                return m;
            }
            long left;
            if (first) {
                start = System.nanoTime();
                left = nanos;
            } else {
                left = nanos - (System.nanoTime() - start);
            }
            if (left <= 0) {
                throw new SocketTimeoutException("no message arrived on the connection " + described() + " within "
                        + timeout);
            }
            if (recvCq != null && waitHere(recvCq, left)) {
                continue; // something came (or the end): take it, or find it taken by another receiver
            }
            lock.lock();
            try {
                left = nanos - (System.nanoTime() - start);
                if (inbox.isEmpty() && ended == null && !closed && left > 0) {
                    sleepers++;
                    try {
                        arrived.awaitNanos(left);
                    } finally {
                        sleepers--;
                    }
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** The connection's name, with its peer's address if the name does not say it (a server's connection). */
    private String described() {
        java.net.InetSocketAddress peer = connection.peerAddress();
        return peer == null || name.contains(peer.toString()) ? name : name + " (peer " + peer + ")";
    }

    /**
     * A message from the inbox, or null if none is there; throws when receiving ended (a copy of why, with this
     * caller's stack) or the connection closed.
     */
    private Message take() throws IOException {
        if (!receivable()) {
            return null; // the usual first look of a blocking receive: nothing there yet, no lock taken
        }
        lock.lock();
        try {
            Message m = inbox.poll();
            if (m != null) {
                queued = inbox.size();
                return m;
            }
            Throwable why = ended;
            if (why != null) {
                throw rethrown(why);
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Why receiving ended, as this caller's exception (an IOException of the same kind, with its stack too). */
    private static IOException rethrown(Throwable why) {
        if (why instanceof IOException io) {
            IOException mine = copyOf(io);
            return mine != null ? mine : io;
        }
        return new IOException("receiving failed", why);
    }

    /** A copy of an end-of-stream or close exception made on another thread, or null for any other. */
    static IOException copyOf(IOException io) {
        if (io instanceof EOFException) {
            return (IOException) new EOFException(io.getMessage()).initCause(io);
        }
        if (io instanceof AsynchronousCloseException) {
            return (IOException) new AsynchronousCloseException().initCause(io);
        }
        return null;
    }

    private boolean receivable() {
        return queued > 0 || ended != null || closed;
    }

    /**
     * Waits on this thread, dispatching the receive CQ's completions here, until a message or the end is there, at
     * most {@code nanos}: spinning with {@link RdmaOptions#busyPoll()}, else asleep on the CQ's own channel
     * ({@link CompletionEngine#blockWhileWaiting}; one receiver at a time, the others wait for the inbox and one of
     * them is woken to take over when this one leaves). False when waiting here could not go on (the usual wait
     * takes over).
     */
    private boolean waitHere(CompletionQueue recvCq, long nanos) throws InterruptedException {
        try {
            if (options.busyPoll()) {
                return engine.pollWhileWaiting(recvCq, receivable, nanos);
            }
            // solicited completions only (every message is sent so) unless a future waits for another completion
            boolean got = engine.blockWhileWaiting(recvCq, receivable, nanos, !connection.awaitsCompletions());
            if (got && sleepers > 0) {
                wakeSleeper(); // only after a wait here: two receivers refused at once must not wake each other
            }
            connection.expectIfAwaited(recvCq);
            return got;
        } catch (IllegalArgumentException | IllegalStateException closedMeanwhile) {
            return false; // the queue was closed (the engine forgot it) or the engine is closing
        }
    }

    /** Wakes a receiver that waits for the inbox: it takes over the wait on the channel. */
    private void wakeSleeper() {
        lock.lock();
        try {
            arrived.signal();
        } finally {
            lock.unlock();
        }
    }
}
