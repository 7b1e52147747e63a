package dev.rdma4j.net;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.ReceivePool;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.connect.ConnectionSetup;
import dev.rdma4j.engine.CompletionEngine;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Accepts {@link RdmaConnection}s: the server side of the short path.
 *
 * <pre>{@code
 * try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(ip, 7471), RdmaOptions.defaults())) {
 *     while (true) {
 *         RdmaConnection c = server.accept();
 *         Thread.startVirtualThread(() -> serve(c));
 *     }
 * }
 * }</pre>
 *
 * <p>The server owns its engine (unless the options give one; in the options' {@link RdmaOptions#pollingMode()}), its
 * rdma_cm listener or TCP server socket, and per device a protection domain (and, with
 * {@link RdmaOptions#sharedReceiveQueue()}, one shared receive queue whose buffers all its connections receive into:
 * {@code ibv_create_srq}, reposted as messages close, its limit event as the back-stop). Each accepted connection owns
 * its queue pair, buffers and completion queue; {@link #close()} closes the connections still open, then the rest.
 *
 * <p><b>The shared receive queue is the server's.</b> It posts every buffer, reposts each when its message is
 * closed, arms the SRQ's limit at a quarter of the buffers and alone re-arms it on each
 * {@code IBV_EVENT_SRQ_LIMIT_REACHED}: the application never touches the SRQ. Reached through
 * {@code connection.queuePair().sharedReceiveQueue()}, the SRQ refuses posts, {@code armLimit}, {@code resize} and
 * {@code refillOnLimit} with an {@link IllegalStateException} naming this server (a second re-armer would race the
 * server's); listeners may observe its events (called after the server's, the limit already re-armed).
 * {@link #sharedReceiveStats()} shows what the SRQ does: buffers posted and lent, limit events, times it ran dry.
 * Every buffer lent to a message not closed leaves none posted: the clients' sends are refused (RNR) and retried,
 * for ever, until a message closes. The server counts each such episode ({@link SharedReceiveStats#dryEpisodes()})
 * and reports it as it starts, with a WARNING on the {@code dev.rdma4j.net} {@link System.Logger} naming the server
 * and how many buffers are lent (at most one WARNING every 10 seconds: the episodes in between are logged at DEBUG
 * and counted in the next): close received messages to give their buffers back.
 *
 * <p>Threading: thread-safe; several threads may accept at once.
 */
public final class RdmaServer implements AutoCloseable {
    private final RdmaOptions options;
    private final CompletionEngine engine;
    private final boolean ownsEngine;
    private final InetSocketAddress address;
    private final CmEventChannel channel;
    private final CmListener listener;
    private final ServerSocket serverSocket;
    private final Context tcpContext;
    /** Per device: the protection domain and the shared receive queue (guarded by this). */
    private final Map<Context, DeviceState> devices = new HashMap<>();
    private final Set<RdmaConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final java.util.concurrent.locks.ReentrantLock acceptLock = new java.util.concurrent.locks.ReentrantLock();
    /** Accepts in progress (waiting for a client or setting one up), for tests that must act while one waits. */
    private final java.util.concurrent.atomic.AtomicInteger accepting = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * A shared receive queue of a device, its buffers, and the completion queue of all its receives; the buffers lent
     * to messages are watched, and running dry reported ({@link DryWatch}).
     */
    static final class SharedReceive {
        private final SharedReceiveQueue srq;
        private final CompletionQueue cq;
        private final ReceivePool pool;
        private final DryWatch watch;
        private final String device;
        /** Gives a message's buffer back to the pool ({@link #giveBack}): made once, not per message. */
        private final Message.Release release;
        private final Map<Integer, RdmaConnection> byQp = new ConcurrentHashMap<>();

        private SharedReceive(SharedReceiveQueue srq, CompletionQueue cq, ReceivePool pool, String device,
                String server) {
            this.srq = srq;
            this.cq = cq;
            this.pool = pool;
            this.device = device;
            this.watch = new DryWatch("the shared receive queue of " + server + " on " + device,
                    "its clients' sends are refused (RNR) and retried until a buffer is posted again", pool.size());
            this.release = this::giveBack;
        }

        SharedReceiveQueue srq() {
            return srq;
        }

        CompletionQueue cq() {
            return cq;
        }

        ReceivePool pool() {
            return pool;
        }

        /** A data message takes its buffer until it is closed ({@link #release()} then gives it back). */
        void lend() {
            watch.lent();
        }

        /** What gives a lent buffer back: reposts it, and the watch counts it returned. */
        Message.Release release() {
            return release;
        }

        private void giveBack(long wrId) {
            try {
                pool.release(wrId);
            } finally {
                watch.returned();
            }
        }

        void attach(int qpNumber, RdmaConnection c) {
            byQp.put(qpNumber, c);
        }

        void detach(int qpNumber) {
            byQp.remove(qpNumber);
        }

        SharedReceiveStats stats() {
            return new SharedReceiveStats(device, pool.size(), pool.posted(), watch.lentNow(), pool.limitEvents(),
                    pool.limitReposts(), watch.episodes(), watch.isDry());
        }

        /** On the engine thread: a receive of some connection, or of one that closed (its buffer goes back). */
        private void dispatch(WorkCompletion wc) {
            RdmaConnection c = byQp.get(wc.qpNumber());
            if (c != null) {
                c.receivedShared(this, wc);
            } else {
                pool.release(wc.wrId());
            }
        }
    }

    /** What the server made on one device, closed after its connections, newest first. */
    private static final class DeviceState {
        final List<AutoCloseable> resources = new ArrayList<>();
        ProtectionDomain pd;
        SharedReceive shared;
    }

    private RdmaServer(RdmaOptions options, CompletionEngine engine, boolean ownsEngine, InetSocketAddress address,
            CmEventChannel channel, CmListener listener, ServerSocket serverSocket, Context tcpContext) {
        this.options = options;
        this.engine = engine;
        this.ownsEngine = ownsEngine;
        this.address = address;
        this.channel = channel;
        this.listener = listener;
        this.serverSocket = serverSocket;
        this.tcpContext = tcpContext;
    }

    /**
     * Listens on {@code address}: {@code rdma_bind_addr} and {@code rdma_listen} with rdma_cm, or a TCP server
     * socket with {@link RdmaOptions.Exchange#TCP} (then the device is opened here).
     *
     * @param address the IP address (rdma_cm: of the RDMA device, or the wildcard) and port
     * @param options buffers, exchange, backlog, timeout
     * @return the listening server
     * @throws IOException if binding fails (e.g. the port is in use)
     */
    public static RdmaServer listen(InetSocketAddress address, RdmaOptions options) throws IOException {
        CompletionEngine engine = options.engine();
        boolean ownsEngine = engine == null;
        CmEventChannel channel = null;
        Context ctx = null;
        try {
            if (ownsEngine) {
                engine = RdmaClient.newEngine(options);
            }
            if (options.exchange() == RdmaOptions.Exchange.RDMA_CM) {
                channel = CmEventChannel.create(engine);
                CmListener l = CmListener.listen(channel, address, options.backlog());
                return new RdmaServer(options, engine, ownsEngine, l.localAddress(), channel, l, null, null);
            }
            ctx = Device.byNameOrDefault(options.device()).open();
            ServerSocket ss = new ServerSocket();
            try {
                ss.bind(address, options.backlog());
            } catch (IOException e) {
                ss.close();
                throw e;
            }
            return new RdmaServer(options, engine, ownsEngine, (InetSocketAddress) ss.getLocalSocketAddress(),
                    null, null, ss, ctx);
        } catch (IOException | RuntimeException e) {
            if (ctx != null) {
                ctx.close();
            }
            if (channel != null) {
                channel.close();
            }
            if (ownsEngine && engine != null) {
                engine.close();
            }
            throw e;
        }
    }

    /**
     * The address it listens on (with the port the system chose for port 0: rdma_cm's or TCP's).
     *
     * @return the address
     */
    public InetSocketAddress localAddress() {
        return address;
    }

    /**
     * Waits for the next client, with no deadline, and accepts it: the queue pair made and its receives
     * posted before {@code rdma_accept} (with this side's exposed region in the private data), or, with TCP,
     * the endpoints exchanged, RTS and a barrier with the client.
     *
     * @return the connection, established
     * @throws AsynchronousCloseException if the server closes meanwhile
     * @throws java.net.ProtocolException  if the client does not speak the short path (rdma_cm private data that
     *                                    is neither none nor a 20-byte region; TCP: see
     *                                    {@link dev.rdma4j.connect.EndpointExchange}): it is rejected, and the next
     *                                    accept serves the next client
     * @throws IOException                if setting up the connection fails; {@link SocketTimeoutException} if
     *                                    the client's exchange does not end within the options' timeout
     * @throws InterruptedException       if interrupted
     */
    public RdmaConnection accept() throws IOException, InterruptedException {
        return accept(null);
    }

    /**
     * {@link #accept()} waiting at most {@code timeout} for a client.
     *
     * @param timeout how long to wait for a client (setting the connection up then has the options' timeout),
     *                or null for no deadline; longer than {@link RdmaOptions#MAX_TIMEOUT} is taken as that
     * @return the connection, established
     * @throws SocketTimeoutException     if no client came in time
     * @throws AsynchronousCloseException  if the server closes meanwhile
     * @throws IOException                 if setting up the connection fails
     * @throws InterruptedException        if interrupted
     * @throws IllegalArgumentException    if {@code timeout} is negative
     */
    public RdmaConnection accept(Duration timeout) throws IOException, InterruptedException {
        return accept(timeout == null ? null : dev.rdma4j.internal.Timeouts.clamp(timeout), () -> false);
    }

    private RdmaConnection accept(Duration timeout, java.util.function.BooleanSupplier cancelled)
            throws IOException, InterruptedException {
        dev.rdma4j.internal.EngineThreads.refuseBlocking("RdmaServer.accept");
        ensureOpen();
        accepting.incrementAndGet();
        try {
            return options.exchange() == RdmaOptions.Exchange.RDMA_CM ? acceptCm(timeout, cancelled)
                    : acceptTcp(timeout, cancelled);
        } catch (IllegalStateException e) {
            if (closed) {
                throw (IOException) new AsynchronousCloseException().initCause(e);
            }
            throw e;
        } finally {
            accepting.decrementAndGet();
        }
    }

    /** How many accepts are in progress now (tests wait on it instead of sleeping). */
    int acceptsInProgress() {
        return accepting.get();
    }

    /**
     * {@link #accept()} on a virtual thread.
     *
     * @return completes with the next connection, or exceptionally as {@link #accept()} throws
     */
    public CompletableFuture<RdmaConnection> acceptAsync() {
        CompletableFuture<RdmaConnection> result = new CompletableFuture<>();
        Thread.ofVirtual().name("rdma4j-accept").start(() -> {
            try {
                RdmaConnection c = accept(null, result::isCancelled);
                if (!result.complete(c)) {
                    c.close(); // cancelled as the client came: nobody will close it
                }
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    private RdmaConnection acceptCm(Duration timeout, java.util.function.BooleanSupplier cancelled)
            throws IOException, InterruptedException {
        CmConnectionRequest request = nextRequest(timeout, cancelled);
        try {
            RegionOffer.parse(request.privateData());
        } catch (java.net.ProtocolException e) {
            java.net.ProtocolException refused = new java.net.ProtocolException("refused a client of " + address
                    + ": " + e.getMessage());
            try {
                request.reject(new byte[0]); // the client learns at once (REJECTED), and this server goes on
            } catch (IOException | RuntimeException r) {
                refused.addSuppressed(r);
            }
            throw refused;
        }
        RdmaConnection c;
        QueuePairBuilder qp;
        try {
            DeviceState d = device(request.context());
            c = connection("from a client of " + address);
            try {
                qp = c.allocate(d.pd, d.shared);
            } catch (IOException | RuntimeException e) {
                RdmaClient.closeAfter(c, e, "accepting");
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            try {
                request.reject(new byte[0]); // rather than leave the client waiting for an answer
            } catch (IOException | RuntimeException r) {
                e.addSuppressed(r);
            }
            throw e;
        }
        try {
            ConnectionSetup setup = new ConnectionSetup() {
                @Override
                public QueuePairBuilder configure(Context context) {
                    return qp;
                }

                @Override
                public void beforeConnect(QueuePair queuePair) throws VerbsException {
                    c.prepare(queuePair);
                }

                @Override
                public int rnrRetryCount() {
                    return c.rnrRetryCount(); // asked of the peer: it sends on credits
                }
            };
            // established() runs on the engine thread as ESTABLISHED is handled (before a disconnect that
            // follows); the wait is on that dependent future, which may be cancelled without harm
            Waits.await(request.acceptAsync(setup, c.regionPrivateData()).thenApply(c::established),
                    options.timeout(), "accept", () -> new SocketTimeoutException("a client's connection to "
                            + address + " was not established within " + options.timeout()));
            return c;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            RdmaClient.closeAfter(c, e, "accepting");
            throw e;
        }
    }

    /** The next connection request: cancelling the wait (deadline, interrupt) leaves it to the next accept. */
    private CmConnectionRequest nextRequest(Duration timeout, java.util.function.BooleanSupplier cancelled)
            throws IOException, InterruptedException {
        CompletableFuture<CmConnectionRequest> next = listener.nextRequestAsync();
        long deadline = timeout == null ? Long.MAX_VALUE
                : dev.rdma4j.internal.Timeouts.deadline(dev.rdma4j.internal.Timeouts.nanos(timeout));
        for (;;) {
            long slice = Math.min(TimeUnit.MILLISECONDS.toNanos(200), deadline - System.nanoTime());
            try {
                return Waits.await(next, Duration.ofNanos(Math.max(1, slice)), "accept",
                        () -> new SocketTimeoutException("no client connected to " + address + " within " + timeout));
            } catch (SocketTimeoutException e) {
                if (System.nanoTime() >= deadline) {
                    throw e;
                }
                if (cancelled.getAsBoolean()) {
                    throw new java.util.concurrent.CancellationException("accept cancelled");
                }
                next = listener.nextRequestAsync(); // the slice's wait was cancelled: a request goes to this one
            }
        }
    }

    private RdmaConnection acceptTcp(Duration timeout, java.util.function.BooleanSupplier cancelled)
            throws IOException, InterruptedException {
        Socket s = null;
        long nanos = timeout == null ? Long.MAX_VALUE : dev.rdma4j.internal.Timeouts.nanos(timeout);
        long deadline = dev.rdma4j.internal.Timeouts.deadline(nanos);
        if (!acceptLock.tryLock(nanos, TimeUnit.NANOSECONDS)) {
            throw new SocketTimeoutException("no client connected to " + address + " within " + timeout);
        }
        try {
            // in slices, never interrupted: an interrupt of a virtual thread in accept closes the server socket
            while (s == null) {
                long slice = Math.min(TimeUnit.MILLISECONDS.toNanos(200), deadline - System.nanoTime());
                if (slice <= 0) {
                    throw new SocketTimeoutException("no client connected to " + address + " within " + timeout);
                }
                if (cancelled.getAsBoolean()) {
                    throw new java.util.concurrent.CancellationException("accept cancelled");
                }
                try {
                    // inside the try: a close() between two slices makes setSoTimeout fail too ("Socket is
                    // closed"), and that is the same asynchronous close as one during accept()
                    serverSocket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(slice)));
                    s = serverSocket.accept();
                } catch (SocketTimeoutException e) {
                    // next slice
                } catch (IOException e) {
                    if (closed) {
                        throw (IOException) new AsynchronousCloseException().initCause(e);
                    }
                    throw e;
                }
            }
        } finally {
            acceptLock.unlock();
        }
        RdmaConnection c;
        try {
            c = connection("from " + s.getRemoteSocketAddress());
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        try {
            DeviceState d = device(tcpContext);
            QueuePair qp = c.own(c.allocate(d.pd, d.shared).build());
            c.handshake(s, qp);
            return c;
        } catch (IOException | RuntimeException | Error e) {
            try {
                s.close();
            } catch (IOException x) {
                e.addSuppressed(x);
            }
            RdmaClient.closeAfter(c, e, "accepting");
            throw e;
        }
    }

    private RdmaConnection connection(String name) {
        RdmaConnection[] self = new RdmaConnection[1];
        RdmaConnection c = new RdmaConnection(options, engine, name, () -> connections.remove(self[0]));
        self[0] = c;
        connections.add(c);
        if (closed) { // raced close(): it may not have seen this one
            c.close();
            ensureOpen();
        }
        return c;
    }

    private synchronized DeviceState device(Context ctx) throws VerbsException {
        ensureOpen();
        DeviceState d = devices.get(ctx);
        if (d != null) {
            return d;
        }
        d = new DeviceState();
        try {
            d.pd = ctx.allocateProtectionDomain();
            d.resources.add(0, d.pd);
            if (options.sharedReceiveQueue()) {
                int n = options.receiveBuffers();
                MemoryRegion buffers = d.pd.allocate((long) n * options.messageSize(),
                        AccessFlag.LOCAL_WRITE);
                d.resources.add(0, buffers);
                SharedReceiveQueue srq = d.pd.createSharedReceiveQueue(n, 1, 0);
                d.resources.add(0, srq);
                SharedReceive[] self = new SharedReceive[1];
                CompletionQueue cq = engine.createCompletionQueue(ctx, n + 16, wc -> self[0].dispatch(wc));
                d.resources.add(0, cq);
                ReceivePool pool = ReceivePool.create(srq, buffers, 0, options.messageSize());
                d.resources.add(0, pool);
                dev.rdma4j.internal.access.Access.get().nameOwner(srq, this + "'s pool (RdmaOptions"
                        + ".sharedReceiveQueue: the server posts the buffers and re-arms the limit; watch it with"
                        + " RdmaServer.sharedReceiveStats())");
                self[0] = new SharedReceive(srq, cq, pool, ctx.device().name(), toString());
                d.shared = self[0];
                engine.watchAsyncEvents(ctx); // the SRQ limit event: the pool's back-stop
            }
        } catch (VerbsException | RuntimeException e) {
            closeAll(d.resources, null);
            throw e;
        }
        devices.put(ctx, d);
        return d;
    }

    /**
     * A snapshot of the server's shared receive queues, one per device that has served a connection
     * ({@code ibv_create_srq} is called at the first connection on a device): buffers posted
     * ({@code ibv_post_srq_recv}) and lent to messages, limit events ({@code IBV_EVENT_SRQ_LIMIT_REACHED}) the server
     * handled, times the SRQ ran dry. Thread-safe; the SRQs are not touched (no verb is called), and a closed server
     * answers an empty list.
     *
     * @return one immutable snapshot per device; empty without {@link RdmaOptions#sharedReceiveQueue()} or before
     *         the first connection
     */
    public synchronized List<SharedReceiveStats> sharedReceiveStats() {
        List<SharedReceiveStats> all = new ArrayList<>();
        for (DeviceState d : devices.values()) {
            if (d.shared != null) {
                all.add(d.shared.stats());
            }
        }
        return List.copyOf(all);
    }

    /**
     * Stops listening, closes every connection still open (their receives fail with
     * {@link AsynchronousCloseException}), then the protection domains, shared receive queues and, if the server
     * made them, its device context and engine. Idempotent.
     *
     * @throws IllegalStateException on the engine thread (it waits for the engine), or if something could not
     *                               be closed (named in its suppressed exceptions)
     */
    @Override
    public void close() {
        dev.rdma4j.internal.EngineThreads.refuseBlocking("RdmaServer.close");
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        RuntimeException failure = null;
        try {
            if (listener != null) {
                listener.close();
            }
            if (serverSocket != null) {
                serverSocket.close();
            }
        } catch (IOException | RuntimeException e) {
            failure = new IllegalStateException("closing the server on " + address + " left something open", e);
        }
        for (RdmaConnection c : new ArrayList<>(connections)) {
            try {
                c.close();
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        List<DeviceState> states;
        synchronized (this) {
            states = new ArrayList<>(devices.values());
            devices.clear();
        }
        for (DeviceState d : states) {
            failure = closeAll(d.resources, failure);
        }
        List<AutoCloseable> rest = new ArrayList<>();
        rest.add(channel);
        rest.add(tcpContext);
        if (ownsEngine) {
            rest.add(engine);
        }
        for (AutoCloseable r : rest) {
            failure = closeAll(r == null ? List.of() : List.of(r), failure);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException closeAll(List<AutoCloseable> resources, RuntimeException failure) {
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                failure = add(failure, e);
            }
        }
        return failure;
    }

    private static RuntimeException add(RuntimeException failure, Exception e) {
        RuntimeException f = failure != null ? failure : new IllegalStateException("closing an RdmaServer failed");
        f.addSuppressed(e);
        return f;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the RdmaServer on " + address + " is closed");
        }
    }

    @Override
    public String toString() {
        return "RdmaServer(" + options.exchange() + " on " + address + (closed ? ", closed" : "") + ")";
    }
}
