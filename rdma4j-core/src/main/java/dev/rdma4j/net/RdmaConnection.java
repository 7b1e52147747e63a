package dev.rdma4j.net;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceivePool;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.EndpointExchange;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.RequestHandler;
import dev.rdma4j.engine.WorkRequestException;
import dev.rdma4j.engine.WorkRequestTimeoutException;
import dev.rdma4j.internal.EngineThreads;
import dev.rdma4j.internal.Timeouts;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A reliable connection (RC) with its buffers, from {@link RdmaClient#connect} or {@link RdmaServer#accept}:
 * messages ({@link #send}, {@link #receive}) through registered buffers that were posted before the peer could
 * send, and RDMA write and read ({@link #write}, {@link #read}) between the region this side exposes
 * ({@link #region()}) and the one the peer exposed ({@link #peerRegion()}), exchanged while connecting.
 * Every operation has a future form ({@code xxxAsync}) and a blocking one with a deadline (the options'
 * timeout, or a {@link Duration}); the verbs stay reachable underneath ({@link #queuePair()},
 * {@link #asyncQueuePair()}, {@link #protectionDomain()}).
 *
 * <p><b>Ending.</b> When the peer closes, messages it sent before are still received, then {@link #receive}
 * throws {@link EOFException}. {@link #close()} disconnects and frees everything the connection made (and,
 * for a client, its engine and device); receives waiting in other threads fail with
 * {@link AsynchronousCloseException}, later calls with {@link IllegalStateException}.
 *
 * <p>Threading: thread-safe. Futures complete on the thread that dispatches the connection's completions: the
 * engine's, or a caller's that waits in a blocking method (it polls the connection's CQ itself, asleep on the CQ's
 * own completion channel in event mode, spinning with {@link RdmaOptions#busyPoll()}), or, as it fails them, the
 * thread that closes. Continuations attached to them must not block, and the blocking methods and {@link #close()}
 * refuse to run there. Sends are posted in the order they were called (those
 * beyond the send buffers wait, copied, in order).
 */
public final class RdmaConnection implements AutoCloseable {
    /** Send queue room beyond the send buffers, for writes, reads and the caller's own requests. */
    private static final int EXTRA_SENDS = 16;

    private final RdmaOptions options;
    private final CompletionEngine engine;
    private final String name;
    private final Runnable onClose;
    private final int size;
    /** What the connection made and closes after its queue pair, newest last (guarded by itself). */
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    /** Received, not yet taken (guarded by lock); non-empty only while {@link #waiters} is empty. */
    private final ArrayDeque<Message> inbox = new ArrayDeque<>();
    /** {@link #inbox}'s size, for a busy-polling receiver's look without the lock (written under it). */
    private volatile int queued;
    private final ArrayDeque<CompletableFuture<Message>> waiters = new ArrayDeque<>();
    /** {@link #waiters}' size, for a look without the lock (written under it). */
    private volatile int awaited;
    /** Signalled when a message goes to the inbox while a blocking receiver waits, and when receiving ends. */
    private final java.util.concurrent.locks.Condition arrived = lock.newCondition();
    /** Blocking receivers waiting on {@link #arrived} (guarded by lock). */
    private volatile int sleepers;
    /** Why receiving ended, once it did (written under lock). */
    private volatile Throwable ended;
    /** Whether a blocking receiver may stop polling: a message, the end, or the close (made once). */
    private final java.util.function.BooleanSupplier receivable = this::receivable;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean peerGone;
    /** A send, write or read that failed other than by a flush: the queue pair is in error because of it. */
    private volatile Throwable failure;
    /** The CQ receives complete on: the connection's own, or the server's shared one. */
    private volatile CompletionQueue recvCq;
    /** The CQ sends complete on: the connection's own. */
    private volatile CompletionQueue sendCq;
    private final ReentrantLock sendLock = new ReentrantLock();
    /** Free send buffers, a stack (guarded by sendLock). */
    private int[] freeSlots;
    private int free;
    /**
     * The future of the send in each buffer (guarded by sendLock): {@link #sendAsync}'s, or a blocking send's that
     * waited for a buffer; null for a send that {@link #send} returned for (counted in {@link #unacknowledged}).
     */
    private CompletableFuture<Void>[] inFlight;
    /** Sends waiting for a buffer, in call order (guarded by sendLock). */
    private final ArrayDeque<PendingSend> pending = new ArrayDeque<>();
    /** Sends that {@link #send} returned for before they were acknowledged (guarded by sendLock). */
    private int unacknowledged;
    /** Sends in flight with a future ({@link #sendAsync}, a send that waited for a buffer; written under sendLock). */
    private volatile int futureSends;
    /** Signalled when {@link #unacknowledged} drops to 0, for {@link #close()}'s linger. */
    private final java.util.concurrent.locks.Condition allAcknowledged = sendLock.newCondition();
    /** Gives a delivered message's buffer back ({@link #repost}); made once. */
    private final Message.Release reposter = this::repost;
    /** The tag of a send's buffer (a receive's is its buffer's index). */
    private static final long SEND = 1L << 32;

    private ProtectionDomain pd;
    private MemoryRegion sendRegion;
    private MemoryRegion recvRegion;
    /** A read-only view of each receive buffer: a message's is a slice of it (one object, not two). */
    private MemorySegment[] receiveViews;
    private MemoryRegion exposed;
    private RdmaServer.SharedReceive shared;
    private volatile QueuePair qp;
    private volatile AsyncQueuePair aq;
    private volatile CmConnection cm;
    private volatile Socket socket;
    private volatile RemoteRegion peerRegion;
    private volatile InetSocketAddress peerAddress;

    /** A send waiting for a buffer. */
    private record PendingSend(MemorySegment data, CompletableFuture<Void> result) {
    }

    RdmaConnection(RdmaOptions options, CompletionEngine engine, String name, Runnable onClose) {
        this.options = options;
        this.engine = engine;
        this.name = name;
        this.onClose = onClose;
        this.size = options.messageSize();
    }

    /** Takes {@code resource} to close with the connection; closes it at once if the connection closed. */
    <T extends AutoCloseable> T own(T resource) {
        synchronized (owned) {
            if (!closed.get()) {
                owned.add(resource);
                return resource;
            }
        }
        try {
            resource.close();
        } catch (Exception e) {
            IllegalStateException x = new IllegalStateException(name + " closed while connecting");
            x.addSuppressed(e);
            throw x;
        }
        throw new IllegalStateException(name + " closed while connecting");
    }

    /**
     * Allocates the buffers and the completion queue on {@code pd} and describes the queue pair: receives on
     * a receive queue of its own, or on the server's shared one.
     */
    dev.rdma4j.QueuePairBuilder allocate(ProtectionDomain pd, RdmaServer.SharedReceive shared) throws VerbsException {
        this.pd = pd;
        this.shared = shared;
        int sends = options.sendBuffers();
        sendRegion = own(pd.allocate((long) sends * size, AccessFlag.LOCAL_WRITE));
        freeSlots = new int[sends];
        @SuppressWarnings({"unchecked", "rawtypes"})
        CompletableFuture<Void>[] results = new CompletableFuture[sends];
        inFlight = results;
        for (int i = 0; i < sends; i++) {
            freeSlots[i] = sends - 1 - i;
        }
        free = sends;
        if (options.exposedBytes() > 0) {
            exposed = own(pd.allocate(options.exposedBytes(), AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ,
                    AccessFlag.REMOTE_WRITE));
        }
        if (shared == null) {
            int receives = options.receiveBuffers();
            recvRegion = own(pd.allocate((long) receives * size, AccessFlag.LOCAL_WRITE));
            receiveViews = new MemorySegment[receives];
            for (int i = 0; i < receives; i++) {
                receiveViews[i] = recvRegion.segment().asSlice((long) i * size, size).asReadOnly();
            }
            // room for twice the send queue: a device may grant more than asked, and the caller's own requests
            // a channel of its own: a blocking receive sleeps on it and polls the CQ itself (no engine hand-off)
            CompletionQueue cq = own(engine.createCompletionQueueWithOwnChannel(pd.context(),
                    2 * (sends + EXTRA_SENDS) + receives));
            recvCq = cq;
            sendCq = cq;
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(sends + EXTRA_SENDS, receives);
        }
        CompletionQueue cq = own(engine.createCompletionQueue(pd.context(), 2 * (sends + EXTRA_SENDS)));
        recvCq = shared.cq();
        sendCq = cq;
        return QueuePair.builder(pd, QpType.RC).sendCompletionQueue(cq).receiveCompletionQueue(shared.cq())
                .sharedReceiveQueue(shared.srq()).capacity(sends + EXTRA_SENDS, 1);
    }

    /** With the queue pair made (INIT or later): drive it through the engine and post the receives. */
    void prepare(QueuePair queuePair) throws VerbsException {
        qp = queuePair;
        aq = engine.wrap(queuePair, new Requests());
        if (shared != null) {
            shared.attach(queuePair.qpNumber(), this);
        } else {
            for (int i = 0; i < options.receiveBuffers(); i++) {
                postReceive(i);
            }
        }
    }

    /** This side's exposed region for the peer: 20 bytes (address, length, rkey), or none. */
    byte[] regionPrivateData() {
        if (exposed == null) {
            return new byte[0];
        }
        return ByteBuffer.allocate(20).putLong(exposed.address()).putLong(exposed.length()).putInt(exposed.rkey())
                .array();
    }

    /**
     * The peer's exposed region from its rdma_cm private data: none (no region) or exactly 20 bytes (address,
     * length, rkey). Anything else is not an rdma4j peer's (e.g. a C client's CM padding, garbage).
     *
     * @throws ProtocolException naming what is wrong
     */
    static RemoteRegion peerRegionOf(byte[] privateData) throws ProtocolException {
        if (privateData.length == 0) {
            return null;
        }
        if (privateData.length != 20) {
            throw new ProtocolException("the peer sent " + privateData.length + " bytes of private data, where an"
                    + " rdma4j peer sends none or 20 (address, length, rkey of its exposed region)");
        }
        ByteBuffer b = ByteBuffer.wrap(privateData);
        long address = b.getLong();
        long length = b.getLong();
        int rkey = b.getInt();
        if (length < 0) {
            throw new ProtocolException("the peer's private data names a region of negative length (" + length + ")");
        }
        if (length == 0) {
            throw new ProtocolException("the peer's private data names an empty region (an rdma4j peer without a"
                    + " region sends no private data)");
        }
        return new RemoteRegion(address, length, rkey);
    }

    /**
     * rdma_cm: ESTABLISHED. Runs on the engine thread as the connect or accept completes, before the engine
     * handles a disconnect that follows at once; a connection closed meanwhile closes {@code connection}.
     */
    CmConnection established(CmConnection connection) {
        if (closed.get()) {
            connection.close();
            throw new IllegalStateException(name + " was closed while connecting");
        }
        cm = connection;
        try {
            peerRegion = peerRegionOf(connection.peerPrivateData());
        } catch (ProtocolException e) {
            // the caller's wait fails with it (an IOException); closing the connection closes cm
            throw new java.util.concurrent.CompletionException(e);
        }
        peerAddress = connection.peerAddress();
        connection.disconnected().whenComplete((v, e) -> peerClosed());
        return connection;
    }

    /**
     * TCP: exchanges endpoints and regions over {@code s}, brings the queue pair to RTS, posts the receives,
     * passes a barrier with the peer, then watches the socket for the peer's end.
     */
    void handshake(Socket s, QueuePair queuePair) throws IOException {
        socket = s;
        qp = queuePair;
        s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, options.timeout().toMillis())));
        int psn = ThreadLocalRandom.current().nextInt(1 << 24);
        QpEndpoint me = queuePair.localEndpoint(psn);
        EndpointExchange.Offer mine = exposed == null ? EndpointExchange.Offer.of(me)
                : EndpointExchange.Offer.of(me, exposed.remote());
        EndpointExchange.Offer peer = EndpointExchange.exchange(s, mine);
        queuePair.connect(peer.endpoint(), psn);
        prepare(queuePair);
        EndpointExchange.sync(s);
        peerRegion = peer.regions().isEmpty() ? null : peer.regions().get(0);
        SocketAddress remote = s.getRemoteSocketAddress();
        peerAddress = remote instanceof InetSocketAddress i ? i : null;
        s.setSoTimeout(0);
        Thread.ofVirtual().name("rdma4j-tcp-watch " + name).start(() -> {
            try {
                while (s.getInputStream().read() >= 0) {
                    // the peer sends nothing more after its sync; its end is end of stream
                }
            } catch (IOException closedOrReset) {
                // closed by this side, or reset by the peer: either way the connection is over
            }
            peerClosed();
        });
    }

    /**
     * The peer closed (or this side is closing): the queue pair goes to ERROR (rdma_cm did it already), so no
     * message arrives after this; receiving ends once the engine has dispatched every receive completion
     * already in the CQ (the peer's last messages: their completions were made before the peer saw its sends
     * acknowledged, so before it disconnected). Receives posted on the connection's own queue flush too; a
     * shared receive queue flushes nothing, and an application holding every buffer has none posted.
     */
    private void peerClosed() {
        if (closed.get()) {
            return;
        }
        peerGone = true;
        QueuePair q = qp;
        if (q != null && cm == null) {
            try {
                q.toError();
            } catch (VerbsException | IllegalStateException ignored) {
                // closed already
            }
        }
        CompletionQueue rq = recvCq;
        if (rq == null) {
            end(new EOFException("the peer closed the connection " + name));
        } else {
            engine.drained(rq).whenComplete((v, e) -> end(new EOFException("the peer closed the connection "
                    + name)));
        }
    }

    /** Posts buffer {@code slot} to receive into, tagged with its index (no object made per message). */
    private void postReceive(int slot) {
        try {
            if (!aq.receiveTagged(recvRegion, (long) slot * size, size, slot)) {
                // the receive queue holds one request per buffer: full means a caller posted receives of its own
                end(new IOException("the receive queue of " + name + " is full: a receive of the caller's"
                        + " took a buffer's place (post sends, writes, reads and atomics on asyncQueuePair())"));
            }
        } catch (VerbsException | RuntimeException e) {
            end(receiveFailure(e));
        }
    }

    /**
     * The connection's sends and receives complete here (the thread that dispatches them: the engine's, or a
     * caller's that busy-polls): tagged with their buffer's index, a send's with {@link #SEND} too.
     */
    private final class Requests implements RequestHandler {
        @Override
        public void onCompletion(long tag, WorkCompletions batch, int index) {
            if ((tag & SEND) != 0) {
                sent((int) tag, batch.isSuccess(index) ? null : new WorkRequestException("send", batch.get(index)));
            } else if (batch.isSuccess(index)) {
                int slot = (int) tag;
                deliver(new Message(reposter, slot, receiveViews[slot].asSlice(0, batch.byteLength(index))));
            } else {
                end(receiveFailure(new WorkRequestException("receive", batch.get(index))));
            }
        }

        @Override
        public void onFailure(long tag, WorkRequestException reason) {
            if ((tag & SEND) != 0) {
                sent((int) tag, reason);
            } else {
                end(receiveFailure(reason));
            }
        }
    }

    /** A receive's deadline passed: the exception {@link #receive(Duration)} throws. */
    private IOException receiveTimeout(Duration timeout) {
        return new SocketTimeoutException("no message arrived on " + name + " within " + timeout);
    }

    /** A receive of the shared queue, for this connection (engine thread). */
    void receivedShared(ReceivePool pool, Message.Release release, WorkCompletion wc) {
        if (wc.isSuccess()) {
            deliver(new Message(release, wc.wrId(), pool.buffer(wc.wrId()).asSlice(0, wc.byteLength())));
        } else {
            pool.release(wc.wrId());
            end(receiveFailure(new WorkRequestException("receive", wc)));
        }
    }

    private void repost(long slot) {
        lock.lock();
        try {
            if (ended != null || closed.get()) {
                return; // the queue pair is going away: nothing to receive into
            }
        } finally {
            lock.unlock();
        }
        postReceive((int) slot);
    }

    private Throwable receiveFailure(Throwable e) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                ? e.getCause() : e;
        if (closed.get()) {
            AsynchronousCloseException c = new AsynchronousCloseException();
            c.initCause(cause);
            return c;
        }
        Throwable failed = failure;
        if (failed != null) {
            return new IOException("the connection " + name + " failed", failed);
        }
        // flushed with no failure of this side: the queue pair went to ERROR because the peer disconnected
        // (possibly before this side recorded its connection)
        if (peerGone || isFlush(cause)) {
            return new EOFException("the peer closed the connection " + name);
        }
        return new IOException("receiving on " + name + " failed", cause);
    }

    private static boolean isFlush(Throwable e) {
        return e instanceof WorkRequestException w && w.status() == dev.rdma4j.WcStatus.WR_FLUSH_ERR;
    }

    private void deliver(Message m) {
        for (;;) {
            CompletableFuture<Message> f;
            lock.lock();
            try {
                if (closed.get()) {
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

    private void end(Throwable cause) {
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

    /**
     * The next message, when it arrives ({@code ibv_post_recv} posted its buffer before, the engine's
     * {@code ibv_poll_cq} took its completion); messages are taken in the order they arrived. Cancelling the
     * future gives up the wait without losing a message.
     *
     * @return completes (on the engine thread, unless a message was waiting) with the message, or
     *         exceptionally with {@link EOFException} once the peer closed and every earlier message was
     *         taken, {@link AsynchronousCloseException} when this connection closes, or an
     *         {@link IOException} naming a failed receive
     * @throws IllegalStateException if the connection is closed
     */
    public CompletableFuture<Message> receiveAsync() {
        ensureOpen();
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

    /**
     * Waits for the next message, at most the options' timeout.
     *
     * @return the message: close it to give its buffer back
     * @throws EOFException                 once the peer closed and every earlier message was taken
     * @throws SocketTimeoutException      when the deadline passes (no message is lost)
     * @throws IOException                  if receiving failed
     * @throws InterruptedException         if interrupted
     */
    public Message receive() throws IOException, InterruptedException {
        return receive(options.timeout());
    }

    /**
     * Waits for the next message, at most {@code timeout}.
     *
     * @param timeout the deadline; longer than {@link RdmaOptions#MAX_TIMEOUT} is taken as that
     * @return the message: close it to give its buffer back
     * @throws EOFException                 once the peer closed and every earlier message was taken
     * @throws SocketTimeoutException      when the deadline passes (no message is lost)
     * @throws IOException                  if receiving failed
     * @throws InterruptedException         if interrupted
     * @throws IllegalArgumentException     if {@code timeout} is negative (nothing is taken)
     */
    public Message receive(Duration timeout) throws IOException, InterruptedException {
        long nanos = Timeouts.nanos(Timeouts.clamp(timeout));
        EngineThreads.refuseBlocking("RdmaConnection.receive");
        ensureOpen();
        // no future: the caller waits for the inbox itself, polling the CQ (busy) or on a condition the engine's
        // delivery signals, so a message costs no object beyond itself
        long start = System.nanoTime();
        for (;;) {
            Message m = take();
            if (m != null) {
                return m;
            }
            long left = nanos - (System.nanoTime() - start);
            if (left <= 0) {
                throw receiveTimeout(timeout);
            }
            if (recvCq != null && waitHere(left)) {
                continue; // something came (or the end): take it, or find it taken by another receiver
            }
            lock.lock();
            try {
                left = nanos - (System.nanoTime() - start);
                if (inbox.isEmpty() && ended == null && !closed.get() && left > 0) {
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

    /**
     * A message from the inbox, or null if none is there; throws when receiving ended (a copy of why, with this
     * caller's stack) or the connection closed.
     */
    private Message take() throws IOException {
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
            if (closed.get()) {
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

    private boolean receivable() {
        return queued > 0 || ended != null || closed.get();
    }

    /**
     * Waits on this thread, dispatching the receive CQ's completions here, until a message or the end is there, at
     * most {@code nanos}: spinning with {@link RdmaOptions#busyPoll()}, else asleep on the CQ's own channel
     * ({@link CompletionEngine#blockWhileWaiting}; one receiver at a time, the others wait for the inbox and one of
     * them is woken to take over when this one leaves). False when waiting here could not go on (the usual wait
     * takes over).
     */
    private boolean waitHere(long nanos) throws InterruptedException {
        try {
            if (options.busyPoll()) {
                return engine.pollWhileWaiting(recvCq, receivable, nanos);
            }
            // solicited completions only (every message is sent so) unless a future waits for another completion
            boolean got = engine.blockWhileWaiting(recvCq, receivable, nanos, !awaitsCompletions());
            if (got && sleepers > 0) {
                wakeSleeper(); // only after a wait here: two receivers refused at once must not wake each other
            }
            expectIfAwaited(recvCq);
            return got;
        } catch (IllegalArgumentException | IllegalStateException closedMeanwhile) {
            return false; // the queue was closed (the engine forgot it) or the engine is closing
        }
    }

    /**
     * After a blocking wait on {@code cq}'s channel: if futures wait for its completions (sends, receives, writes or
     * reads with futures, a send that waits for a buffer), the engine takes the channel back now rather than at its
     * next look, up to 8 ms later. Nothing in the blocking idiom (three volatile reads).
     */
    private void expectIfAwaited(CompletionQueue cq) {
        if (awaitsCompletions()) {
            engine.expect(cq);
        }
    }

    /** Whether futures wait for completions of the connection's queues (sends, receives, writes, reads). */
    private boolean awaitsCompletions() {
        return futureSends > 0 || awaited > 0 || aq.outstandingFutures() > 0;
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

    /**
     * Sends a message ({@code ibv_post_send}, {@code IBV_WR_SEND}): copies it into a send buffer and posts it;
     * when all send buffers are in flight, a copy waits its turn.
     *
     * @param data at most the options' message size
     * @return completes when the peer acknowledged the message (its receive completed)
     * @throws IllegalArgumentException if the message is larger than the buffers
     * @throws IllegalStateException    if the connection is closed
     */
    public CompletableFuture<Void> sendAsync(MemorySegment data) {
        checkSize(data);
        ensureOpen();
        CompletableFuture<Void> result = new CompletableFuture<>();
        int slot;
        Throwable e;
        sendLock.lock();
        try {
            if (free == 0 || !pending.isEmpty()) {
                pending.add(new PendingSend(copyOf(data), result));
                return result;
            }
            slot = freeSlots[--free];
            e = post(slot, data, result);
        } finally {
            sendLock.unlock();
        }
        if (e != null) {
            sent(slot, e); // fails result, hands the buffer on
        }
        return result;
    }

    private void checkSize(MemorySegment data) {
        if (data.byteSize() > size) {
            throw new IllegalArgumentException("a message of " + data.byteSize() + " bytes does not fit the "
                    + size + "-byte buffers (RdmaOptions.messageSize)");
        }
    }

    /** A copy of a message that waits for a buffer. */
    private static MemorySegment copyOf(MemorySegment data) {
        return MemorySegment.ofArray(new byte[(int) data.byteSize()]).copyFrom(data);
    }

    /**
     * {@link #sendAsync(MemorySegment)} of an array.
     *
     * @param data the bytes
     * @return completes when the peer acknowledged the message
     */
    public CompletableFuture<Void> sendAsync(byte[] data) {
        return sendAsync(MemorySegment.ofArray(data));
    }

    /**
     * Sends a message: copies it into a free send buffer, posts it and returns, as a socket's {@code write} returns
     * once the bytes are in its buffer; when every send buffer is in flight, waits, at most the options' timeout,
     * until this message was sent and acknowledged. The peer's acknowledgement of a message this returned for
     * early is not waited for: a send that fails later fails the connection, and the next send or receive throws
     * (an {@link IOException} whose cause is the {@link WorkRequestException} with its status); {@link #close()}
     * waits for the sends in flight. {@link #sendAsync} tells when each message was acknowledged.
     *
     * @param data at most the options' message size
     * @throws WorkRequestTimeoutException at the deadline, waiting for a buffer: {@code posted()} if the send was
     *                                     posted (it stays posted until the device completes it), else it was taken
     *                                     out of the queue of sends waiting for a buffer and is never sent
     * @throws IOException                 if this send, or an earlier one, failed
     * @throws InterruptedException        if interrupted
     */
    public void send(MemorySegment data) throws IOException, InterruptedException {
        send(data, options.timeout());
    }

    /**
     * {@link #send(MemorySegment)} of an array.
     *
     * @param data the bytes
     * @throws IOException          if the send failed or timed out
     * @throws InterruptedException if interrupted
     */
    public void send(byte[] data) throws IOException, InterruptedException {
        send(MemorySegment.ofArray(data), options.timeout());
    }

    /**
     * {@link #send(MemorySegment)} with a deadline of its own for the wait for a buffer.
     *
     * @param data    at most the options' message size
     * @param timeout the deadline; longer than {@link RdmaOptions#MAX_TIMEOUT} is taken as that
     * @throws WorkRequestTimeoutException at the deadline: {@code posted()} if the send was posted (it stays
     *                                     posted until the device completes it), else it was taken out of the
     *                                     queue of sends waiting for a buffer and is never sent
     * @throws IOException                 if this send, or an earlier one, failed
     * @throws InterruptedException        if interrupted
     * @throws IllegalArgumentException    if {@code timeout} is negative (nothing is sent)
     */
    public void send(MemorySegment data, Duration timeout) throws IOException, InterruptedException {
        Duration t = Timeouts.clamp(timeout); // before the send is queued
        EngineThreads.refuseBlocking("RdmaConnection.send");
        Throwable failed = failure;
        if (failed != null) {
            throw new IOException("the connection " + name + " failed", failed);
        }
        checkSize(data);
        ensureOpen();
        CompletableFuture<Void> f;
        int slot = -1;
        Throwable e = null;
        sendLock.lock();
        try {
            if (free > 0 && pending.isEmpty()) {
                slot = freeSlots[--free];
                e = post(slot, data, null);
                if (e == null) {
                    return; // its acknowledgement is the dispatcher's, its failure the next call's, close() waits for it
                }
                unacknowledged--; // never posted: this caller hears of it now
                f = new CompletableFuture<>();
                inFlight[slot] = f;
                futureSends++;
            } else {
                f = new CompletableFuture<>();
                pending.add(new PendingSend(copyOf(data), f));
            }
        } finally {
            sendLock.unlock();
        }
        if (e != null) {
            sent(slot, e); // fails f, hands the buffer on
        }
        CompletableFuture<Void> waited = f;
        await(f, waitHere(sendCq, f, t), "send",
                () -> new WorkRequestTimeoutException("send", t, !dropPending(waited)));
    }

    /**
     * Waits, at most the options' timeout, until the sends that {@link #send} returned for early completed, so
     * that they reach the peer before the disconnect (a socket's linger); not when the peer is gone or the engine
     * closed (then they complete at once, or never).
     */
    private void lingerForSends() {
        long left = Timeouts.nanos(options.timeout());
        sendLock.lock();
        try {
            while (unacknowledged > 0 && left > 0 && !peerGone && !engine.isClosed()) {
                // a tenth of a second at a time: the peer's leaving and the engine's end signal nothing here
                long step = Math.min(left, TimeUnit.MILLISECONDS.toNanos(100));
                left -= step - Math.max(0, allAcknowledged.awaitNanos(step));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the close goes on without the linger
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Waits for {@code f} dispatching {@code cq}'s completions on this thread, no wake-up or hand-off: polling with
     * {@link RdmaOptions#busyPoll()} ({@link CompletionEngine#pollWhileWaiting}), else asleep on the CQ's own channel
     * ({@link CompletionEngine#blockWhileWaiting}). Returns what is left of {@code timeout} for the usual wait,
     * which takes over when {@code f} is not done (the deadline, another thread waits on the channel, or the
     * queue closed).
     */
    private Duration waitHere(CompletionQueue cq, CompletableFuture<?> f, Duration timeout) {
        if (cq == null || f.isDone()) {
            return timeout;
        }
        long start = System.nanoTime();
        long nanos = Timeouts.nanos(timeout);
        try {
            if (options.busyPoll()) {
                engine.pollWhileWaiting(cq, f, nanos);
            } else {
                engine.blockWhileWaiting(cq, f::isDone, nanos);
                expectIfAwaited(cq);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the wait below sees it, and cancels f as it would have
        } catch (IllegalArgumentException | IllegalStateException closedMeanwhile) {
            // the queue was closed (the engine forgot it) or the engine is closing: the wait below fails
        }
        return Duration.ofNanos(Math.max(0, nanos - (System.nanoTime() - start)));
    }

    /** Takes a send that waits for a buffer out of the queue: true if it was there (so never posted). */
    private boolean dropPending(CompletableFuture<Void> result) {
        sendLock.lock();
        try {
            return pending.removeIf(p -> p.result() == result);
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Copies {@code data} into send buffer {@code slot} and posts it, tagged with the buffer (sendLock held):
     * {@code result} is the send's future, or null for a send that {@link #send} returns for (then counted in
     * {@link #unacknowledged}).
     *
     * @return null once posted (the completion goes to {@link #sent}), else why it was not (the caller hands the
     *         buffer to {@link #sent} with it)
     */
    private Throwable post(int slot, MemorySegment data, CompletableFuture<Void> result) {
        inFlight[slot] = result;
        if (result == null) {
            unacknowledged++;
        } else {
            futureSends++;
            engine.expect(sendCq); // a blocking receiver may have borrowed the CQ's channel: taken back, or it wakes
        }
        long offset = (long) slot * size;
        try {
            MemorySegment.copy(data, 0, sendRegion.segment(), offset, data.byteSize());
            // solicited: the peer's blocking receive sleeps for solicited completions only (one wake-up a message)
            if (aq.sendTagged(sendRegion, offset, (int) data.byteSize(), SEND | slot, true)) {
                return null;
            }
            // the send queue has room for every buffer and more: full means a caller's own requests took it
            return new IOException("the send queue of " + name + " is full: requests posted on asyncQueuePair() took"
                    + " the send buffers' room");
        } catch (VerbsException | RuntimeException e) { // the caller's memory is gone, or the connection is closing
            return e;
        }
    }

    /**
     * The send in buffer {@code slot} completed, or failed ({@code e}): completes its future (or counts the
     * acknowledgement of a send that {@link #send} returned for) and posts the next waiting send in the freed
     * buffer. Runs where the completion is dispatched (engine thread, or a busy-polling caller's), or on the
     * caller's thread when a post failed at once; a loop, not a recursion, when posts fail at once.
     */
    private void sent(int slot, Throwable e) {
        for (;;) {
            if (e instanceof WorkRequestException && !isFlush(e) && failure == null) {
                failure = e; // the queue pair went to ERROR because of this: its receives flush next
            }
            CompletableFuture<Void> result;
            PendingSend next;
            Throwable notPosted = null;
            sendLock.lock();
            try {
                result = inFlight[slot];
                inFlight[slot] = null;
                if (result == null) {
                    if (--unacknowledged == 0) {
                        allAcknowledged.signalAll();
                    }
                } else {
                    futureSends--;
                }
                next = pending.poll();
                if (next == null) {
                    freeSlots[free++] = slot;
                } else {
                    notPosted = post(slot, next.data(), next.result());
                }
            } finally {
                sendLock.unlock();
            }
            if (result != null) {
                complete(result, e);
            }
            if (notPosted == null) {
                return;
            }
            e = notPosted;
        }
    }

    private static void complete(CompletableFuture<Void> result, Throwable e) {
        if (e == null) {
            result.complete(null);
            return;
        }
        Throwable cause = e instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                ? c.getCause() : e;
        result.completeExceptionally(cause);
    }

    /**
     * RDMA write ({@code IBV_WR_RDMA_WRITE}) of {@code length} bytes at {@code localOffset} in
     * {@link #region()} to {@code remoteOffset} in {@link #peerRegion()}.
     *
     * @param localOffset  where the bytes are in this side's region
     * @param remoteOffset where they go in the peer's
     * @param length       bytes
     * @return completes when the write is done at the peer
     * @throws IllegalStateException if either side exposes no region, or the connection is closed
     */
    public CompletableFuture<Void> writeAsync(long localOffset, long remoteOffset, int length) {
        ensureOpen();
        return aq.writeAsync(region(), localOffset, length, peerRegion(), remoteOffset).thenApply(wc -> null);
    }

    /**
     * RDMA write, waiting at most the options' timeout: see {@link #writeAsync}.
     *
     * @param localOffset  where the bytes are in this side's region
     * @param remoteOffset where they go in the peer's
     * @param length       bytes
     * @throws IOException          if the write failed or timed out
     * @throws InterruptedException if interrupted
     * @throws IllegalArgumentException if {@code localOffset}, {@code remoteOffset} or {@code length} is negative or
     *                                  the range does not fit its region (the message names the values)
     */
    public void write(long localOffset, long remoteOffset, int length) throws IOException, InterruptedException {
        ensureOpen();
        aq.blocking(options.timeout()).write(region(), localOffset, length, peerRegion(), remoteOffset);
    }

    /**
     * RDMA read ({@code IBV_WR_RDMA_READ}) of {@code length} bytes at {@code remoteOffset} in
     * {@link #peerRegion()} into {@code localOffset} in {@link #region()}.
     *
     * @param localOffset  where the bytes land in this side's region
     * @param remoteOffset where they are in the peer's
     * @param length       bytes
     * @return completes when the bytes are in this side's region
     * @throws IllegalStateException if either side exposes no region, or the connection is closed
     */
    public CompletableFuture<Void> readAsync(long localOffset, long remoteOffset, int length) {
        ensureOpen();
        return aq.readAsync(region(), localOffset, length, peerRegion(), remoteOffset).thenApply(wc -> null);
    }

    /**
     * RDMA read, waiting at most the options' timeout: see {@link #readAsync}.
     *
     * @param localOffset  where the bytes land in this side's region
     * @param remoteOffset where they are in the peer's
     * @param length       bytes
     * @throws IOException          if the read failed or timed out
     * @throws InterruptedException if interrupted
     * @throws IllegalArgumentException if {@code localOffset}, {@code remoteOffset} or {@code length} is negative or
     *                                  the range does not fit its region (the message names the values)
     */
    public void read(long localOffset, long remoteOffset, int length) throws IOException, InterruptedException {
        ensureOpen();
        aq.blocking(options.timeout()).read(region(), localOffset, length, peerRegion(), remoteOffset);
    }

    /**
     * The region this side exposes to the peer ({@link RdmaOptions.Builder#exposeRegion}): fill it through
     * {@code region().segment()} for {@link #write}, read what {@link #read} or the peer's writes put there.
     *
     * @return the region ({@code LOCAL_WRITE}, {@code REMOTE_READ}, {@code REMOTE_WRITE})
     * @throws IllegalStateException if the options expose none
     */
    public MemoryRegion region() {
        if (exposed == null) {
            throw new IllegalStateException(name + " exposes no region: set RdmaOptions.Builder.exposeRegion");
        }
        return exposed;
    }

    /**
     * The region the peer exposed (address, length, rkey), received while connecting.
     *
     * @return the peer's region
     * @throws IllegalStateException if the peer exposes none
     */
    public RemoteRegion peerRegion() {
        RemoteRegion r = peerRegion;
        if (r == null) {
            throw new IllegalStateException("the peer of " + name + " exposes no region (its exposeRegion is 0)");
        }
        return r;
    }

    /**
     * The queue pair (RTS), for queries and the verbs this class does not offer; the connection drives it
     * through {@link #asyncQueuePair()}, so post on that, not on the queue pair.
     *
     * @return the queue pair
     */
    public QueuePair queuePair() {
        return qp;
    }

    /**
     * The connection's driver of its queue pair: every verb as a future (atomics, immediate data, chains).
     * Its receives would compete with the connection's: post sends, writes, reads and atomics.
     *
     * @return the async queue pair
     */
    public AsyncQueuePair asyncQueuePair() {
        return aq;
    }

    /**
     * The protection domain of the connection's memory: register more regions here.
     *
     * @return the protection domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The engine that drives the connection.
     *
     * @return the engine
     */
    public CompletionEngine engine() {
        return engine;
    }

    /**
     * The peer's address (rdma_cm's, or the TCP connection's).
     *
     * @return the address, or null if unknown
     */
    public InetSocketAddress peerAddress() {
        return peerAddress;
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Waits, at most the options' timeout, for the messages {@link #send} returned for before they were
     * acknowledged (unless the peer is gone), then disconnects ({@code rdma_disconnect}, or closing the TCP
     * connection) and frees the queue pair
     * ({@code ibv_destroy_qp}), buffers ({@code ibv_dereg_mr}) and completion queue ({@code ibv_destroy_cq}),
     * then what a client's connection owns (protection domain, device, engine). Receives waiting in other
     * threads and sends waiting for a buffer fail with {@link AsynchronousCloseException}; sends, writes and
     * reads in flight fail; messages not yet taken go back. Idempotent.
     *
     * @throws IllegalStateException on the engine thread (it may wait for the engine), or if something could
     *                               not be closed (named in its suppressed exceptions)
     */
    @Override
    public void close() {
        EngineThreads.refuseBlocking("RdmaConnection.close");
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Message> left;
        lock.lock();
        try {
            left = new ArrayList<>(inbox);
            inbox.clear();
            queued = 0;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        left.forEach(Message::close);
        end(new AsynchronousCloseException());
        List<PendingSend> unsent;
        sendLock.lock();
        try {
            unsent = new ArrayList<>(pending);
            pending.clear();
        } finally {
            sendLock.unlock();
        }
        unsent.forEach(p -> p.result().completeExceptionally(new AsynchronousCloseException()));
        lingerForSends();
        RuntimeException failure = null;
        CmConnection c = cm;
        if (c != null) {
            try {
                c.disconnect();
            } catch (VerbsException | IllegalStateException ignored) {
                // the peer disconnected first, or the connection is gone
            }
        }
        QueuePair q = qp;
        if (shared != null && q != null) {
            // the shared queue's buffers this queue pair took must come back to the pool: no more are taken once
            // it is in ERROR, and destroying it could drop the completions of those it took (mlx5 cleans its
            // CQEs out of the CQ), so dispatch them first (each goes back, as this connection is closed)
            try {
                q.toError();
                engine.drained(shared.cq()).get(10, TimeUnit.SECONDS);
            } catch (VerbsException | RuntimeException | ExecutionException | TimeoutException ignored) {
                // closed already, or the engine is gone: nothing more will be dispatched
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            shared.detach(q.qpNumber());
        }
        failure = closeQuietly(aq, failure);
        failure = closeQuietly(c, failure);
        failure = closeQuietly(socket, failure);
        failure = closeQuietly(q, failure);
        List<AutoCloseable> mine;
        synchronized (owned) {
            mine = new ArrayList<>(owned);
            owned.clear();
        }
        for (int i = mine.size() - 1; i >= 0; i--) {
            failure = closeQuietly(mine.get(i), failure);
        }
        if (onClose != null) {
            onClose.run();
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException closeQuietly(AutoCloseable r, RuntimeException failure) {
        if (r == null) {
            return failure;
        }
        try {
            r.close();
            return failure;
        } catch (Exception e) {
            RuntimeException f = failure != null ? failure
                    : new IllegalStateException("closing an RDMA connection left something open");
            f.addSuppressed(e);
            return f;
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    /**
     * Waits for {@code f}; at the deadline cancels it (a cancelled wait loses nothing: see deliver) and throws
     * {@code late.get()}.
     */
    static <T> T await(CompletableFuture<T> f, Duration timeout, String what,
            java.util.function.Supplier<IOException> late) throws IOException, InterruptedException {
        try {
            return f.get(Timeouts.nanos(timeout), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (f.cancel(false)) {
                throw late.get();
            }
            return await(f, timeout, what, late); // completed as it timed out
        } catch (InterruptedException e) {
            if (!f.cancel(false) && f.isDone() && !f.isCompletedExceptionally()) {
                Thread.currentThread().interrupt(); // completed as the caller was interrupted: keep both
                return f.resultNow();
            }
            throw e;
        } catch (CancellationException e) {
            throw new IOException(what + " was cancelled", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                // the future's exception was made on another thread: keep this caller's stack as well
                IOException mine = copyOf(io);
                throw mine != null ? mine : io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(what + " failed", cause);
        }
    }

    private static IOException copyOf(IOException io) {
        if (io instanceof EOFException) {
            return (IOException) new EOFException(io.getMessage()).initCause(io);
        }
        if (io instanceof AsynchronousCloseException) {
            return (IOException) new AsynchronousCloseException().initCause(io);
        }
        return null;
    }

    @Override
    public String toString() {
        return "RdmaConnection(" + name + (closed.get() ? ", closed" : "") + ")";
    }
}
