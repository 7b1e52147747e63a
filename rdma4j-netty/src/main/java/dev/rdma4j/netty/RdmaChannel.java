package dev.rdma4j.netty;

import dev.rdma4j.Context;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.ConnectionSetup;
import io.netty.buffer.ByteBuf;
import io.netty.channel.AbstractChannel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ChannelOutputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * A Netty channel over one RDMA reliable connection (RC queue pair set up with rdma_cm): a byte stream like a TCP
 * socket's, so Netty's codecs and the servers built on them (HTTP, gRPC) run on it unchanged.
 *
 * <p>Data movement: writes are copied into registered send buffers ({@link RdmaChannelOption#SEND_BUFFERS} of
 * {@link RdmaChannelOption#MESSAGE_SIZE} bytes) and sent with {@code IBV_WR_SEND_WITH_IMM}, small writes packed into
 * one message and a flush's messages posted as one list ({@code ibv_post_send}); writes in registered memory go from
 * it (zero-copy), large direct ones by rendezvous: {@link #counters()} says which. Received messages arrive as
 * {@link ByteBuf}s over the registered receive buffer itself; its {@code release()} posts it again
 * ({@code ibv_post_recv}). While half the receive buffers are held by the application, further messages are copied
 * into buffers of the channel's allocator instead, so a reader that keeps buffers (a decoder waiting for the rest
 * of a frame) never stops the connection.
 *
 * <p>Flow control is credit-based, never relying on RNR retries: a receive posted is a credit, given to the peer in
 * the immediate data of the next message (or in a message of its own when the peer runs low); a message is sent only
 * with a credit in hand, and the last credit only by a message that gives credits back, so the two sides can never
 * both wait. Writes that find no credit or send buffer stay in Netty's outbound buffer, whose water marks drive
 * {@code isWritable()} and {@code channelWritabilityChanged} as on any channel.
 *
 * <p>Close: {@code shutdownOutput()} sends an end-of-stream mark after the data already written; the peer sees its
 * input shut down (a {@code ChannelInputShutdownEvent} with {@code ALLOW_HALF_CLOSURE}, else it closes).
 * {@code close()} waits (at most 10 s) for the messages already posted to be acknowledged, then disconnects
 * ({@code rdma_disconnect}) and frees the queue pair, completion queue and buffers; receive buffers still held by
 * the application are freed when the last is released. The peer's disconnect closes the channel after the messages
 * that arrived before it; a failed completion (the peer's host gone: {@code RETRY_EXC_ERR}) reaches
 * {@code exceptionCaught} as an {@link IOException} and closes it.
 *
 * <p>Threading: as every Netty channel: thread-safe; its I/O, handlers and completions run on its event loop, an
 * {@link RdmaIoHandler}'s. Received buffers may be released on any thread.
 */
public final class RdmaChannel extends AbstractChannel implements DuplexChannel {
    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);
    /**
     * Retransmissions before a request fails: 6 (rxe retries 7 for ever); with rdma_cm's ACK timeout (17 on RoCE:
     * 0.5 s) a gone peer is noticed within about 4 s of a message to it.
     */
    private static final int RETRY_COUNT = 6;
    /** How long a close waits for the messages already posted. */
    static final long LINGER_MILLIS = 10_000;

    private enum State { OPEN, CONNECTING, ACTIVE, CLOSED }

    private final RdmaChannelConfig config = new RdmaChannelConfig(this);
    private volatile State state = State.OPEN;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    // event loop only
    /** The server side's request, until answered. */
    private CmConnectionRequest request;
    private IoRegistration registration;
    private ChannelPromise connectPromise;
    private RdmaPipe pipe;
    /** The sizes of this channel's connection, read once when it begins. */
    private RdmaPipe.Sizes sizes;
    /** Reads fired since the last channelReadComplete. */
    private boolean readCompletePending;
    private boolean readRequested;
    private boolean afterIoScheduled;
    private final Runnable afterIo = this::afterIo;

    /** A client channel: {@code Bootstrap.channel(RdmaChannel.class)}; connect it to a listening RDMA address. */
    public RdmaChannel() {
        super(null);
    }

    /** A channel accepted by {@code parent}: it answers {@code request} once registered on its event loop. */
    RdmaChannel(RdmaServerChannel parent, CmConnectionRequest request) {
        super(parent);
        this.request = request;
        this.state = State.CONNECTING;
    }

    @Override
    public RdmaChannelConfig config() {
        return config;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    public RdmaServerChannel parent() {
        return (RdmaServerChannel) super.parent();
    }

    @Override
    public boolean isOpen() {
        return state != State.CLOSED;
    }

    @Override
    public boolean isActive() {
        return state == State.ACTIVE;
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) super.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return (InetSocketAddress) super.remoteAddress();
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop l && l.isCompatible(RdmaUnsafe.class);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new RdmaUnsafe();
    }

    private RdmaIoHandler handler() {
        return registration.attachment();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        if (pipe != null) { // its CQ is driven by the loop it was set up on: it cannot move
            promise.setFailure(new IllegalStateException(this + " was set up on another event loop and cannot move"));
            return;
        }
        RdmaIoHandler.register(eventLoop(), (RdmaUnsafe) unsafe(), promise, r -> registration = r, () -> {
            if (request != null) {
                acceptRequest();
            }
        });
    }

    @Override
    protected void doDeregister() {
        RdmaIoHandler.deregister(registration);
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        throw new UnsupportedOperationException("an RdmaChannel binds when it connects: give the local address to"
                + " connect(remote, local)");
    }

    @Override
    protected void doDisconnect() {
        doClose();
    }

    @Override
    protected void doClose() {
        State was = state;
        state = State.CLOSED;
        ChannelPromise p = connectPromise;
        if (p != null) {
            connectPromise = null;
            p.tryFailure(new ClosedChannelException());
        }
        CmConnectionRequest r = request;
        if (r != null) {
            request = null;
            try {
                r.reject(new byte[0]);
            } catch (IOException | RuntimeException ignored) {
                // the listener closed meanwhile: the request was rejected with it
            }
        }
        RdmaPipe t = pipe;
        if (t != null) {
            // also when the loop shuts down: its RdmaIoHandler.destroy() lets the linger finish (within its bound)
            t.close(was == State.ACTIVE ? LINGER_MILLIS : 0);
        }
    }

    @Override
    protected void doBeginRead() {
        if (inputShutdown) {
            return;
        }
        readRequested = true;
        if (pipe != null && pipe.hasQueuedReads()) {
            scheduleAfterIo();
        }
    }

    @Override
    protected Object filterOutboundMessage(Object msg) throws Exception {
        if (outputShutdown) { // fails this write only; what was flushed before the shutdown still goes
            throw new io.netty.channel.socket.ChannelOutputShutdownException("the output of " + this + " is shut down");
        }
        if (msg instanceof ByteBuf) {
            return msg;
        }
        throw new UnsupportedOperationException("an RdmaChannel writes ByteBufs, not " + msg.getClass().getName());
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        RdmaPipe t = pipe;
        if (t == null || state != State.ACTIVE) {
            throw state == State.CLOSED ? new ClosedChannelException() : new NotYetConnectedException();
        }
        t.write(in);
    }

    // ---------------------------------------------------------------- set-up

    /** The verbs objects of a connection, made by rdma_cm's set-up on this channel's loop. */
    private ConnectionSetup setup(RdmaPipe.Peer peer) {
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context context) throws VerbsException {
                if (state != State.CONNECTING) { // closed while rdma_cm resolved: make nothing
                    throw new IllegalStateException(RdmaChannel.this + " was closed while connecting");
                }
                RegisteredMemory memory = handler().memory(context);
                RdmaPipe t = new RdmaPipe(RdmaChannel.this, handler(), context, memory, sizes, peer);
                config.registeredMemory(memory.allocator());
                pipe = t;
                return t.queuePairBuilder();
            }

            @Override
            public void beforeConnect(QueuePair queuePair) throws VerbsException {
                pipe.start(queuePair);
            }

            @Override
            public byte[] connectPrivateData(QueuePair queuePair) {
                return RdmaPipe.Peer.describe(sizes);
            }

            /** Not rxe's endless 7: a connection whose peer host or link is gone fails (RETRY_EXC_ERR). */
            @Override
            public int retryCount() {
                return RETRY_COUNT;
            }

            /** The rendezvous the peer may have announced and this side reads at once. */
            @Override
            public int readDepth() {
                return RdmaPipe.RENDEZVOUS_IN_FLIGHT;
            }
        };
    }

    /** Server side, on this channel's loop once registered: accept the peer's request with a new pipe. */
    private void acceptRequest() {
        CmConnectionRequest r = request;
        request = null;
        CompletableFuture<CmConnection> accepted;
        sizes = RdmaPipe.Sizes.of(config);
        try {
            RdmaPipe.Peer peer = RdmaPipe.Peer.parse(r.privateData());
            accepted = r.acceptAsync(setup(peer), RdmaPipe.Peer.describe(sizes));
        } catch (IOException | RuntimeException e) {
            try {
                r.reject(new byte[0]);
            } catch (IOException | RuntimeException ignored) {
                // answered meanwhile (accept failed after rdma_accept) or the listener closed
            }
            failed(e);
            return;
        }
        // ESTABLISHED is handled on the listener's loop: come back to this one
        accepted.whenComplete((c, e) -> runOnLoop(() -> {
            if (e != null) {
                failed(e);
            } else {
                established(c);
            }
        }, c));
    }

    /** Client side: the connect ({@code rdma_resolve_addr}, route, {@code rdma_connect}) on this loop. */
    private void connect(InetSocketAddress remoteAddress, InetSocketAddress localAddress, ChannelPromise promise) {
        state = State.CONNECTING;
        connectPromise = promise;
        sizes = RdmaPipe.Sizes.of(config);
        int millis = config.getConnectTimeoutMillis();
        Duration timeout = millis > 0 ? Duration.ofMillis(millis) : Duration.ofDays(1);
        CompletableFuture<CmConnection> f;
        try {
            f = CmConnection.connectAsync(handler().cmChannel(), localAddress, remoteAddress, setup(null),
                    RdmaPipe.Peer.describe(sizes), timeout);
        } catch (VerbsException | RuntimeException e) {
            failed(e);
            return;
        }
        // the loop's own rdma_cm channel: this completes on the loop thread
        f.whenComplete((c, e) -> {
            if (e != null) {
                failed(e instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null
                        ? ce.getCause() : e);
            } else if (state != State.CONNECTING) { // closed meanwhile
                c.close();
                if (pipe != null) {
                    pipe.teardown();
                }
            } else {
                ChannelPromise p = connectPromise;
                connectPromise = null;
                established(c);
                if (p != null && isActive() && !p.trySuccess()) {
                    close(); // cancelled by the caller meanwhile
                }
            }
        });
    }

    /** ESTABLISHED: the channel becomes active and watches the peer's disconnect. */
    private void established(CmConnection c) {
        if (state != State.CONNECTING || pipe == null) {
            c.close();
            if (pipe != null) {
                pipe.teardown();
            }
            return;
        }
        if (!pipe.established(c) || !isOpen()) { // unusable peer parameters: the channel closed
            return;
        }
        local = c.localAddress();
        remote = c.peerAddress();
        state = State.ACTIVE;
        c.disconnectedAsync().whenComplete((v, e) -> runOnLoop(this::peerDisconnected, null));
        pipeline().fireChannelActive();
    }

    /** The set-up failed: fail the connect (client) or close (server side), freeing what was made. */
    private void failed(Throwable e) {
        ChannelPromise p = connectPromise;
        connectPromise = null;
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                ? e.getCause() : e;
        if (p != null) {
            IOException io = cause instanceof IOException x ? x
                    : new IOException("connecting to " + remote + " failed: " + cause, cause);
            p.tryFailure(io);
        }
        close();
    }

    /** Runs {@code task} on this channel's loop; when the loop is gone, closes {@code orphan} instead. */
    private void runOnLoop(Runnable task, CmConnection orphan) {
        try {
            if (eventLoop().inEventLoop()) {
                task.run();
            } else {
                eventLoop().execute(task);
            }
        } catch (RejectedExecutionException e) {
            if (orphan != null) {
                orphan.close();
            }
        }
    }

    // ---------------------------------------------------------------- events from the pipe (event loop)

    /** A message's bytes for the application (the pipe's receive buffer, or a copy). */
    void received(ByteBuf data) {
        if (inputShutdown) {
            data.release();
            return;
        }
        pipeline().fireChannelRead(data);
        readCompletePending = true;
        scheduleAfterIo();
    }

    /** Whether reads may be delivered now (auto-read, or read() asked for them). */
    boolean readRequested() {
        return readRequested && !inputShutdown;
    }

    /** Whether this side shut its input down (what arrives is dropped). */
    boolean inputShutdownLocally() {
        return inputShutdown;
    }

    /** The peer shut its output down (its end-of-stream mark, after its data and their channelReadComplete). */
    void peerShutdownOutput() {
        if (inputShutdown || !isOpen()) {
            return;
        }
        if (config.isAllowHalfClosure()) {
            inputShutdown = true;
            pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
            if (outputShutdown) {
                close();
            }
        } else {
            close();
        }
    }

    /** The peer disconnected: what arrived before is delivered, then the channel closes. */
    private void peerDisconnected() {
        RdmaPipe t = pipe;
        if (t == null || !isOpen()) {
            return;
        }
        t.drainThen(this::ended);
    }

    /** A failed completion or post: the connection is broken. */
    void broken(IOException e) {
        if (!isOpen()) {
            return;
        }
        pipeline().fireExceptionCaught(e);
        close();
    }

    /**
     * The queue pair went to the error state without an error of its own (its requests are flushed): the peer
     * disconnected, or the connection ended under it. Like a socket's end of stream: what arrived is delivered, then
     * the channel closes.
     */
    void ended() {
        RdmaPipe t = pipe;
        if (!isOpen() || t == null) {
            return;
        }
        if (t.hasQueuedReads()) {
            readRequested = true;
            t.deliverQueued();
        }
        fireReadCompleteIfPending();
        if (!t.peerClosed()) { // a disconnect without the peer's close: like a TCP reset
            pipeline().fireExceptionCaught(new IOException("connection reset: " + this + " was disconnected without"
                    + " its peer closing (the peer's process was killed, or its host or the link is gone)"));
        }
        close();
    }

    /** Credits or buffers came back, or credits are owed: the after-I/O pass is needed this loop pass. */
    void afterIoNeeded() {
        scheduleAfterIo();
    }

    private void scheduleAfterIo() {
        if (!afterIoScheduled && isOpen()) {
            afterIoScheduled = true;
            try {
                eventLoop().execute(afterIo);
            } catch (RejectedExecutionException loopGone) {
                // the loop shuts down: nothing after I/O is due any more
            }
        }
    }

    /**
     * After the completions of a loop pass: one channelReadComplete for the reads fired, queued reads when read()
     * asked for them, and a flush of writes that waited for credits.
     */
    private void afterIo() {
        afterIoScheduled = false;
        RdmaPipe t = pipe;
        if (t == null) {
            return;
        }
        if (readRequested() && t.hasQueuedReads()) {
            t.deliverQueued();
        }
        fireReadCompleteIfPending();
        if (isActive() && t.wantsFlush()) {
            ((RdmaUnsafe) unsafe()).flushNow();
        }
        t.afterIo();
        t.reportEndOfInput();
    }

    private void fireReadCompleteIfPending() {
        if (readCompletePending) {
            readCompletePending = false;
            if (!config.isAutoRead()) {
                readRequested = false;
            }
            pipeline().fireChannelReadComplete();
        }
    }

    // ---------------------------------------------------------------- half-close

    @Override
    public boolean isInputShutdown() {
        return inputShutdown || !isActive();
    }

    @Override
    public boolean isOutputShutdown() {
        return outputShutdown || !isActive();
    }

    @Override
    public boolean isShutdown() {
        return (inputShutdown && outputShutdown) || !isActive();
    }

    @Override
    public ChannelFuture shutdownOutput() {
        return shutdownOutput(newPromise());
    }

    /**
     * Ends the output: data written before is sent, then an end-of-stream mark the peer sees as its input's end; later
     * writes fail.
     */
    @Override
    public ChannelFuture shutdownOutput(ChannelPromise promise) {
        EventLoop loop = eventLoop();
        if (loop.inEventLoop()) {
            shutdownOutput0(promise);
        } else {
            loop.execute(() -> shutdownOutput0(promise));
        }
        return promise;
    }

    private void shutdownOutput0(ChannelPromise promise) {
        if (!isActive()) {
            promise.setFailure(new ClosedChannelException());
            return;
        }
        if (outputShutdown) {
            promise.setSuccess();
            return;
        }
        unsafe().flush(); // what was written before goes first
        outputShutdown = true;
        pipe.sendEndOfStream();
        promise.setSuccess();
        pipeline().fireUserEventTriggered(ChannelOutputShutdownEvent.INSTANCE);
        if (inputShutdown) {
            close();
        }
    }

    @Override
    public ChannelFuture shutdownInput() {
        return shutdownInput(newPromise());
    }

    /** Stops reading: messages that arrive from now on are dropped (their buffers posted again at once). */
    @Override
    public ChannelFuture shutdownInput(ChannelPromise promise) {
        EventLoop loop = eventLoop();
        Runnable r = () -> {
            inputShutdown = true;
            if (pipe != null) {
                pipe.dropQueuedReads();
            }
            promise.setSuccess();
        };
        if (loop.inEventLoop()) {
            r.run();
        } else {
            loop.execute(r);
        }
        return promise;
    }

    @Override
    public ChannelFuture shutdown() {
        return shutdown(newPromise());
    }

    @Override
    public ChannelFuture shutdown(ChannelPromise promise) {
        ChannelFuture out = shutdownOutput();
        out.addListener(f -> shutdownInput().addListener(g -> {
            Throwable c = f.cause() != null ? f.cause() : g.cause();
            if (c != null) {
                promise.tryFailure(c);
            } else {
                promise.trySuccess();
            }
        }));
        return promise;
    }

    /** For tests: the connection's queue pair, or null before it is set up. */
    QueuePair queuePair() {
        RdmaPipe t = pipe;
        return t == null ? null : t.queuePair();
    }

    /** For tests: receive buffers lent to the application and not yet released. */
    int lentBuffers() {
        RdmaPipe t = pipe;
        return t == null ? 0 : t.lentBuffers();
    }

    /**
     * What this channel has sent, by path (copied into send buffers, zero-copy, rendezvous), and read of the peer's
     * rendezvous: counted on the event loop as messages are posted, snapshot from any thread (see
     * {@link RdmaChannelCounters} for how current it is).
     *
     * @return the counts so far; {@link RdmaChannelCounters#NONE} before the connection is set up
     */
    public RdmaChannelCounters counters() {
        RdmaPipe t = pipe;
        return t == null ? RdmaChannelCounters.NONE : t.counters.snapshot(t.lentBuffers());
    }

    @Override
    public String toString() {
        RdmaPipe t = pipe;
        return "RdmaChannel[" + local + " -> " + remote + ", " + state + (t == null ? "" : ", " + t.state()) + "]";
    }

    /** The channel's unsafe, and what {@link RdmaIoHandler} registers. */
    private final class RdmaUnsafe extends AbstractUnsafe implements RdmaIoHandle {
        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            if (!promise.setUncancellable() || !ensureOpen(promise)) {
                return;
            }
            if (state == State.CONNECTING) {
                promise.setFailure(new ConnectionPendingException());
                return;
            }
            if (state == State.ACTIVE) {
                promise.setFailure(new AlreadyConnectedException());
                return;
            }
            if (!(remoteAddress instanceof InetSocketAddress r)
                    || (localAddress != null && !(localAddress instanceof InetSocketAddress))) {
                promise.setFailure(new UnsupportedAddressTypeException());
                return;
            }
            RdmaChannel.this.connect(r, (InetSocketAddress) localAddress, promise);
        }

        /** Writes what waits in the outbound buffer, now that credits or send buffers are back. */
        void flushNow() {
            super.flush0();
        }

        @Override
        public void close() {
            close(voidPromise());
        }

        @Override
        public void unregistered() {
            // the loop let the channel go (deregister or shut-down): nothing of its own to release here
        }
    }
}
