package dev.rdma4j.net;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpState;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.EndpointExchange;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.BlockingQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.WorkRequestException;
import dev.rdma4j.engine.WorkRequestTimeoutException;
import dev.rdma4j.internal.EngineThreads;
import dev.rdma4j.internal.Timeouts;
import dev.rdma4j.net.protocol.Credits;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A reliable connection (RC) with its buffers, from {@link RdmaClient#connect} or {@link RdmaServer#accept}:
 * messages ({@link #send}, {@link #receive}) through registered buffers that were posted before the peer could
 * send, and RDMA write and read ({@link #write}, {@link #read}) between the region this side exposes
 * ({@link #region()}) and the one the peer exposed ({@link #peerRegion()}), exchanged while connecting.
 * Every operation has a future form ({@code xxxAsync}) and a blocking one with a deadline (the options'
 * timeout, or a {@link Duration}); the verbs stay reachable underneath ({@link #queuePair()},
 * {@link #asyncQueuePair()}, {@link #protectionDomain()}).
 *
 * <p><b>Flow control.</b> Messages follow the protocol of {@code dev.rdma4j.net.protocol}, rdma4j-netty's too: each
 * goes as a SEND WITH IMMEDIATE only on a credit, a receive the peer posted and granted (in the immediate of one of
 * its messages, or of a message of credits only); a message without a credit waits in its send buffer, in order.
 * So a message never finds the peer without a posted receive, and receiver-not-ready (RNR) does not happen in normal
 * operation: the queue pair retries an RNR NAK a bounded number of times ({@code rnr_retry} {@value #RNR_RETRY}, not
 * 7, which retries for ever), so a bug fails the connection rather than hanging it. A server's shared receive queue
 * ({@link RdmaOptions#sharedReceiveQueue()}) is the exception: its clients together may outrun the pool their credits
 * come from, so the peers of such a server keep retrying for ever there (rdma_cm sets the count the receiver asks
 * for; with {@link RdmaOptions.Exchange#TCP} each side sets its own, and a client cannot tell); the server reports
 * when its SRQ runs dry ({@link RdmaServer}). A receive queue of the connection's own that runs dry is reported too.
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
 * refuse to run there. Sends are posted in the order they were called (those beyond the send buffers wait, copied,
 * in order).
 */
public final class RdmaConnection implements AutoCloseable {
    /** Send queue room beyond the send buffers, for credit messages, writes, reads and the caller's own requests. */
    private static final int EXTRA_SENDS = 16;
    /** RNR retries of a queue pair whose sends go on credits (the peer's receive is posted): finite. */
    static final int RNR_RETRY = 6;
    /** RNR retries toward a shared receive queue, whose clients may outrun its pool together: for ever. */
    private static final int RNR_RETRY_FOREVER = 7;

    private final RdmaOptions options;
    private final CompletionEngine engine;
    private final String name;
    private final Runnable onClose;
    private final int size;
    /** What the connection made and closes after its queue pair, newest last (guarded by itself). */
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final Inbox inbox;
    private Outbox outbox;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean peerGone;
    /** The CQ receives complete on: the connection's own, or the server's shared one. */
    private volatile CompletionQueue recvCq;
    /** The CQ sends complete on: the connection's own. */
    private volatile CompletionQueue sendCq;

    private ProtectionDomain pd;
    private MemoryRegion sendRegion;
    private MemoryRegion exposed;
    private RdmaServer.SharedReceive shared;
    private volatile QueuePair qp;
    private volatile AsyncQueuePair aq;
    /** The blocking view with the options' timeout, for {@link #write} and {@link #read}: made once. */
    private volatile BlockingQueuePair blocking;
    private volatile CmConnection cm;
    private volatile Socket socket;
    private volatile RemoteRegion peerRegion;
    private volatile InetSocketAddress peerAddress;

    RdmaConnection(RdmaOptions options, CompletionEngine engine, String name, Runnable onClose) {
        this.options = options;
        this.engine = engine;
        this.name = name;
        this.onClose = onClose;
        this.size = options.messageSize();
        this.inbox = new Inbox(this, engine, options, name);
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
     * a receive queue of its own (the data receives and {@link Credits#CONTROL_RECEIVES} more for messages of credits
     * only), or on the server's shared one.
     */
    dev.rdma4j.QueuePairBuilder allocate(ProtectionDomain pd, RdmaServer.SharedReceive shared) throws VerbsException {
        this.pd = pd;
        this.shared = shared;
        int sends = options.sendBuffers();
        sendRegion = own(pd.allocate((long) sends * size, AccessFlag.LOCAL_WRITE));
        outbox = new Outbox(engine, name, size, sends, options.receiveBuffers());
        if (options.exposedBytes() > 0) {
            exposed = own(pd.allocate(options.exposedBytes(), AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ,
                    AccessFlag.REMOTE_WRITE));
        }
        if (shared == null) {
            int receives = options.receiveBuffers() + Credits.CONTROL_RECEIVES;
            inbox.buffers(own(pd.allocate((long) receives * size, AccessFlag.LOCAL_WRITE)));
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

    /**
     * The RNR retries this side asks of the peer (rdma_cm's {@code rnr_retry_count}): bounded, as the peer sends on
     * credits only, except toward a shared receive queue.
     */
    int rnrRetryCount() {
        return shared == null ? RNR_RETRY : RNR_RETRY_FOREVER;
    }

    /** With the queue pair made (INIT or later): drive it through the engine and post the receives. */
    void prepare(QueuePair queuePair) throws VerbsException {
        qp = queuePair;
        aq = engine.wrap(queuePair, inbox.new Requests());
        blocking = aq.blocking(options.timeout());
        outbox.attach(sendRegion, aq, sendCq);
        inbox.attach(aq, outbox);
        if (shared != null) {
            shared.attach(queuePair.qpNumber(), this);
        }
    }

    /** This side's exposed region for the peer: 20 bytes (address, length, rkey), or none. */
    byte[] regionPrivateData() {
        return RegionOffer.privateData(exposed);
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
            peerRegion = RegionOffer.parse(connection.peerPrivateData()); // the peer's exposed region, or none
        } catch (ProtocolException e) {
            // the caller's wait fails with it (an IOException); closing the connection closes cm
            throw new java.util.concurrent.CompletionException(e);
        }
        peerAddress = connection.peerAddress();
        connection.disconnectedAsync().whenComplete((v, e) -> peerClosed());
        inbox.start(); // the peer's queue pair is in RTR at least: its receives are posted
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
        if (queuePair.state() == QpState.RESET) {
            queuePair.toInit();
        }
        queuePair.toRtr(RtrAttributes.builder(peer.endpoint()).build());
        queuePair.toRts(RtsAttributes.builder(psn).rnrRetry(RNR_RETRY).build()); // a client cannot tell an SRQ
        prepare(queuePair);
        EndpointExchange.sync(s);
        peerRegion = peer.regions().isEmpty() ? null : peer.regions().get(0);
        SocketAddress remote = s.getRemoteSocketAddress();
        peerAddress = remote instanceof InetSocketAddress i ? i : null;
        s.setSoTimeout(0);
        inbox.start(); // the peer posted its receives before the barrier
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
        Outbox out = outbox;
        if (out != null) { // no credit comes any more: the sends waiting for one fail
            out.stop(new EOFException("the peer closed the connection " + name + " before the message was sent"));
        }
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
            inbox.end(new EOFException("the peer closed the connection " + name));
        } else {
            engine.drainAsync(rq).whenComplete((v, e) -> inbox.end(new EOFException("the peer closed the connection "
                    + name)));
        }
    }

    /** A receive of the shared queue, for this connection (engine thread). */
    void receivedShared(RdmaServer.SharedReceive from, WorkCompletion wc) {
        inbox.receivedShared(from, wc);
    }

    boolean peerGone() {
        return peerGone;
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
        return inbox.receiveAsync(recvCq);
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
        Duration t = Timeouts.clamp(timeout);
        EngineThreads.refuseBlocking("RdmaConnection.receive");
        ensureOpen();
        return inbox.receive(t, recvCq);
    }

    /**
     * After a blocking wait on {@code cq}'s channel: if futures wait for its completions (sends, receives, writes or
     * reads with futures, a send that waits for a buffer), the engine takes the channel back now rather than at its
     * next look, up to 8 ms later. Nothing in the blocking idiom (three volatile reads).
     */
    void expectIfAwaited(CompletionQueue cq) {
        if (awaitsCompletions()) {
            engine.expect(cq);
        }
    }

    /** Whether futures wait for completions of the connection's queues (sends, receives, writes, reads). */
    boolean awaitsCompletions() {
        return outbox.futureSends() > 0 || inbox.awaited() > 0 || aq.outstandingFutures() > 0;
    }

    /**
     * Sends a message ({@code ibv_post_send}, {@code IBV_WR_SEND_WITH_IMM}): copies it into a send buffer and posts
     * it once the peer granted a receive for it; when all send buffers are taken, a copy waits its turn.
     *
     * @param data at most the options' message size
     * @return completes when the peer acknowledged the message (its receive completed)
     * @throws IllegalArgumentException if the message is larger than the buffers
     * @throws IllegalStateException    if the connection is closed
     */
    public CompletableFuture<Void> sendAsync(MemorySegment data) {
        checkSize(data);
        ensureOpen();
        return outbox.sendAsync(data);
    }

    private void checkSize(MemorySegment data) {
        if (data.byteSize() > size) {
            throw new IllegalArgumentException("a message of " + data.byteSize() + " bytes does not fit the "
                    + size + "-byte buffers (RdmaOptions.messageSize)");
        }
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
     * Sends a message: copies it into a free send buffer and returns, as a socket's {@code write} returns once the
     * bytes are in its buffer (the message goes as soon as the peer granted a receive for it); when every send buffer
     * is taken, waits, at most the options' timeout, until this message was sent and acknowledged. The peer's acknowledgement of a message this returned for
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
        throwIfFailed();
        checkSize(data);
        ensureOpen();
        CompletableFuture<Void> f = outbox.sendOrWait(data);
        if (f == null) {
            return; // posted or staged: acknowledged by the dispatcher, a failure the next call's, the close waits
        }
        if (f == Outbox.NOT_SENT) {
            throwIfFailed(); // its post failed at once, or an earlier send had (else the peer left: lost, as a socket's)
            return;
        }
        Waits.await(f, outbox.waitHere(f, t, options.busyPoll(), this), "send",
                () -> new WorkRequestTimeoutException("send", t, !outbox.dropPending(f)));
    }

    private void throwIfFailed() throws IOException {
        Throwable failed = outbox.failure();
        if (failed != null) {
            throw new IOException("the connection " + name + " failed", failed);
        }
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
        blocking.write(region(), localOffset, length, peerRegion(), remoteOffset);
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
        blocking.read(region(), localOffset, length, peerRegion(), remoteOffset);
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
     * acknowledged (unless the peer is gone; meanwhile the peer's credits still come in), then disconnects ({@code rdma_disconnect}, or closing the TCP
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
        inbox.close();
        Outbox out = outbox;
        if (out != null) {
            out.failWaiting(new AsynchronousCloseException());
            out.linger(options.timeout(), () -> peerGone);
            inbox.tearDown();
            out.stop(new AsynchronousCloseException()); // never posted: the peer granted no receive for them
        }
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
                engine.drainAsync(shared.cq()).get(10, TimeUnit.SECONDS);
            } catch (VerbsException | RuntimeException | ExecutionException | TimeoutException ignored) {
                // closed already, or the engine is gone: nothing more will be dispatched
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            shared.detach(q.qpNumber());
        }
        failure = Waits.closeQuietly(aq, failure);
        failure = Waits.closeQuietly(c, failure);
        failure = Waits.closeQuietly(socket, failure);
        failure = Waits.closeQuietly(q, failure);
        List<AutoCloseable> mine;
        synchronized (owned) {
            mine = new ArrayList<>(owned);
            owned.clear();
        }
        for (int i = mine.size() - 1; i >= 0; i--) {
            failure = Waits.closeQuietly(mine.get(i), failure);
        }
        if (onClose != null) {
            onClose.run();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * This connection's counters (rdma4j's, not the device's): messages and bytes sent (each copied into a send buffer)
     * and received, sends that waited for a buffer, credit stalls, receive buffers lent to messages not closed.
     *
     * @return a snapshot; thread-safe
     */
    public ConnectionCounters counters() {
        return inbox.counters();
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    @Override
    public String toString() {
        return "RdmaConnection(" + name + (closed.get() ? ", closed" : "") + ")";
    }
}
