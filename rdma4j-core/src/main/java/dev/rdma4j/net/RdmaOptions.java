package dev.rdma4j.net;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import dev.rdma4j.internal.Timeouts;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link RdmaServer} and {@link RdmaClient} set up connections: immutable, made by {@link #builder()}.
 * Both sides of a connection should use the same message size.
 *
 * <p>Thread-safe (immutable).
 */
public final class RdmaOptions {
    /**
     * The longest timeout the short path tells apart: {@code Long.MAX_VALUE} nanoseconds (about 292 years). Every
     * {@link Duration} it takes ({@link Builder#timeout}, {@code RdmaServer.accept}, {@code RdmaConnection.send} and
     * {@code receive}) is taken as this when longer, and refused with an {@link IllegalArgumentException} when
     * negative, before anything is done.
     */
    public static final Duration MAX_TIMEOUT = Timeouts.MAX;

    /**
     * The system property that sets the default {@link #timeout()} (ISO-8601, e.g. {@code PT2M}): a program's
     * deadlines scaled for a slow machine (an emulated device runs about 30 times slower) without changing it.
     */
    public static final String TIMEOUT_PROPERTY = "dev.rdma4j.net.timeout";

    /** How the two sides of a connection find each other. */
    public enum Exchange {
        /**
         * rdma_cm: {@code rdma_resolve_addr}, {@code rdma_connect}/{@code rdma_accept}; the address is the
         * peer's IP address on the RDMA device (its RoCE GID), the port an rdma_cm port.
         */
        RDMA_CM,
        /**
         * A TCP connection to the address carries both queue pairs' endpoints (LID, QP number, PSN, GID) and
         * regions, then stays open: its end is the peer's disconnect. The device is {@link #device()}'s.
         */
        TCP
    }

    private final Exchange exchange;
    private final String device;
    private final int messageSize;
    private final int receiveBuffers;
    private final int sendBuffers;
    private final long exposedBytes;
    private final boolean sharedReceiveQueue;
    private final Duration timeout;
    private final CompletionEngine engine;
    private final int backlog;
    private final boolean busyPoll;
    private final PollingMode pollingMode;

    private RdmaOptions(Builder b) {
        this.exchange = b.exchange;
        this.device = b.device;
        this.messageSize = b.messageSize;
        this.receiveBuffers = b.receiveBuffers;
        this.sendBuffers = b.sendBuffers;
        this.exposedBytes = b.exposedBytes;
        this.sharedReceiveQueue = b.sharedReceiveQueue;
        this.timeout = b.timeout;
        this.engine = b.engine;
        this.backlog = b.backlog;
        this.busyPoll = b.busyPoll;
        this.pollingMode = b.pollingMode;
    }

    /**
     * The defaults: rdma_cm, 4 KiB messages, 16 receive and 16 send buffers, no exposed region, a receive
     * queue per connection, 30 s deadlines (or the system property {@value #TIMEOUT_PROPERTY}, an ISO-8601
     * duration such as {@code PT2M}, for slow machines: emulators, CI), an engine of the server's or
     * connection's own in {@link PollingMode#EVENT} mode, waiting callers that sleep (not busy-polling).
     *
     * @return the default options
     */
    public static RdmaOptions defaults() {
        return builder().build();
    }

    /**
     * A builder starting from the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * How the sides find each other.
     *
     * @return the exchange
     */
    public Exchange exchange() {
        return exchange;
    }

    /**
     * The RDMA device of {@link Exchange#TCP} connections ({@code null}: {@code RDMA4J_DEVICE}, else the
     * first device); rdma_cm picks the device from the address.
     *
     * @return the device name, or null
     */
    public String device() {
        return device;
    }

    /**
     * The size of each send and receive buffer: the largest message.
     *
     * @return bytes
     */
    public int messageSize() {
        return messageSize;
    }

    /**
     * Receive buffers posted per connection (per server with {@link #sharedReceiveQueue()}).
     *
     * @return the count
     */
    public int receiveBuffers() {
        return receiveBuffers;
    }

    /**
     * Send buffers per connection: sends in flight at once (more wait in order).
     *
     * @return the count
     */
    public int sendBuffers() {
        return sendBuffers;
    }

    /**
     * The size of the region each side exposes to its peer for RDMA read and write (0: none).
     *
     * @return bytes
     */
    public long exposedBytes() {
        return exposedBytes;
    }

    /**
     * Whether a server's connections share one receive queue and its buffers (one SRQ per device, owned by the
     * server: see {@link Builder#sharedReceiveQueue}).
     *
     * @return true for one shared receive queue
     */
    public boolean sharedReceiveQueue() {
        return sharedReceiveQueue;
    }

    /**
     * The deadline of connecting and of every blocking call without a {@link Duration} of its own.
     *
     * @return the timeout
     */
    public Duration timeout() {
        return timeout;
    }

    /**
     * The caller's completion engine, or {@code null} for one of the server's or connection's own.
     *
     * @return the engine, or null
     */
    public CompletionEngine engine() {
        return engine;
    }

    /**
     * A server's rdma_cm or TCP backlog.
     *
     * @return the backlog
     */
    public int backlog() {
        return backlog;
    }

    /**
     * Whether a blocking call that waits polls the connection's completion queue itself ({@link Builder#busyPoll}).
     *
     * @return true if waiting callers poll
     */
    public boolean busyPoll() {
        return busyPoll;
    }

    /**
     * How the connections' engine thread waits for completions ({@link Builder#pollingMode}): the mode of the
     * server's or connection's own engine, or of the caller's {@link #engine()}.
     *
     * @return the polling mode
     */
    public PollingMode pollingMode() {
        if (engine != null) {
            return engine.mode();
        }
        return pollingMode != null ? pollingMode : PollingMode.EVENT;
    }

    @Override
    public String toString() {
        return "RdmaOptions[" + exchange + (device == null ? "" : ", device " + device) + ", messages of "
                + messageSize + " B, " + receiveBuffers + " receive and " + sendBuffers + " send buffers"
                + (exposedBytes > 0 ? ", exposes " + exposedBytes + " B" : "")
                + (sharedReceiveQueue ? ", shared receive queue" : "") + (busyPoll ? ", busy-polled" : "")
                + (pollingMode != null ? ", engine " + pollingMode : "")
                + ", timeout " + timeout + "]";
    }

    /** Builds {@link RdmaOptions}; not thread-safe. */
    public static final class Builder {
        private Exchange exchange = Exchange.RDMA_CM;
        private String device;
        private int messageSize = 4096;
        private int receiveBuffers = 16;
        private int sendBuffers = 16;
        private long exposedBytes;
        private boolean sharedReceiveQueue;
        private Duration timeout = defaultTimeout();
        private CompletionEngine engine;
        private int backlog = 16;
        private boolean busyPoll;
        private PollingMode pollingMode;

        private Builder() {
        }

        /**
         * How the sides find each other (default {@link Exchange#RDMA_CM}).
         *
         * @param exchange rdma_cm or TCP
         * @return this builder
         */
        public Builder exchange(Exchange exchange) {
            this.exchange = Objects.requireNonNull(exchange, "exchange");
            return this;
        }

        /**
         * The device of {@link Exchange#TCP} connections ({@code ibv_open_device}).
         *
         * @param name e.g. {@code "rxe0"}, or null for the default
         * @return this builder
         */
        public Builder device(String name) {
            this.device = name;
            return this;
        }

        /**
         * The largest message, the size of every send and receive buffer (default 4096).
         *
         * @param bytes at least 1
         * @return this builder
         */
        public Builder messageSize(int bytes) {
            this.messageSize = positive(bytes, "messageSize");
            return this;
        }

        /**
         * Receive buffers per connection, or per server with a shared receive queue (default 16).
         *
         * @param n at least 1
         * @return this builder
         */
        public Builder receiveBuffers(int n) {
            this.receiveBuffers = positive(n, "receiveBuffers");
            return this;
        }

        /**
         * Send buffers per connection (default 16).
         *
         * @param n at least 1
         * @return this builder
         */
        public Builder sendBuffers(int n) {
            this.sendBuffers = positive(n, "sendBuffers");
            return this;
        }

        /**
         * Exposes a region of {@code bytes} to the peer (remote read and write); its address and rkey travel
         * in the connection's set-up (default 0: none).
         *
         * @param bytes 0 or more
         * @return this builder
         */
        public Builder exposeRegion(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("exposeRegion needs 0 or more bytes: " + bytes);
            }
            this.exposedBytes = bytes;
            return this;
        }

        /**
         * For a server: one shared receive queue ({@code ibv_create_srq}) with {@link #receiveBuffers} buffers
         * for all its connections, reposted as messages are closed, instead of buffers per connection.
         *
         * <p>The server owns the SRQ: it posts the buffers ({@code ibv_post_srq_recv}), reposts each as its message
         * closes, and alone arms and re-arms the SRQ's limit ({@code ibv_modify_srq}, at a quarter of the buffers,
         * again on each {@code IBV_EVENT_SRQ_LIMIT_REACHED}); the SRQ reached through a connection's
         * {@code queuePair()} refuses posts and limits of the application's ({@link IllegalStateException} naming
         * the server). {@code RdmaServer.sharedReceiveStats()} shows its state. Without the per-connection credits'
         * guarantee (the buffers are shared), clients retry receiver-not-ready (RNR) for ever while the SRQ has no
         * buffer posted: when every buffer is lent to a message not closed, the server counts the episode and logs a
         * WARNING (at most one every 10 seconds).
         *
         * @param shared whether to share
         * @return this builder
         */
        public Builder sharedReceiveQueue(boolean shared) {
            this.sharedReceiveQueue = shared;
            return this;
        }

        /**
         * The deadline of connecting and of blocking calls given none (default 30 s).
         *
         * @param timeout positive; longer than {@link #MAX_TIMEOUT} ({@code Long.MAX_VALUE} nanoseconds, about 292
         *                years) is taken as {@code MAX_TIMEOUT}, no deadline in practice (the socket and rdma_cm
         *                steps of connecting then wait at most {@code Integer.MAX_VALUE} ms each, their C limit)
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is zero or negative
         */
        public Builder timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("the timeout must be positive: " + timeout);
            }
            this.timeout = Timeouts.clamp(timeout);
            return this;
        }

        /**
         * Drives the connections with the caller's engine, which the caller closes after them (default: an
         * engine of their own, in {@link #pollingMode} mode, {@link PollingMode#EVENT} unless set). Not together with
         * {@link #pollingMode}: {@link #build()} refuses both.
         *
         * @param engine the engine, or null
         * @return this builder
         */
        public Builder engine(CompletionEngine engine) {
            this.engine = engine;
            return this;
        }

        /**
         * The listen backlog (default 16).
         *
         * @param backlog at least 1
         * @return this builder
         */
        public Builder backlog(int backlog) {
            this.backlog = positive(backlog, "backlog");
            return this;
        }

        /**
         * Busy polling by the waiting caller (default false): a blocking call that waits ({@code receive}, a
         * {@code send} waiting for a buffer) polls the connection's completion queue on its own thread
         * ({@code ibv_poll_cq}, {@link CompletionEngine#pollWhileWaiting}) instead of sleeping on the connection's
         * completion channel: no interrupt, no wake-up; the waiting thread spins, as a C program polls its own CQ.
         * Without it (the default, with an engine in event mode) the waiting thread sleeps on the connection's own
         * completion channel and polls the CQ itself when woken ({@link CompletionEngine#blockWhileWaiting}), as a
         * C program in event mode does: no hand-off between threads either way (on platform threads). The engine's
         * thread handles what completes while nobody waits (looking every 1 to 8 ms while waiters come and go, so
         * without a wake-up per completion). The futures
         * ({@code receiveAsync}, ...) complete on the engine thread as before: for them, choose
         * {@link PollingMode#BUSY_POLL} with {@link #pollingMode} (or give an engine in that mode). A spinning caller
         * holds its CPU: busy-poll on platform threads. A virtual thread neither spins nor sleeps on the channel
         * (either would hold its carrier from the other virtual threads, the one that sends what it waits for
         * included): it parks while the engine's thread dispatches, with or without this option.
         *
         * @param on whether waiting callers poll
         * @return this builder
         */
        public Builder busyPoll(boolean on) {
            this.busyPoll = on;
            return this;
        }

        /**
         * How the engine of the server's or connection's own waits for completions (default
         * {@link PollingMode#EVENT}), without building one ({@code CompletionEngine.builder().mode(mode)}):
         * {@link PollingMode#EVENT} sleeps in {@code epoll_wait} on the completion channels
         * ({@code ibv_req_notify_cq}, {@code ibv_get_cq_event}); {@link PollingMode#BUSY_POLL} polls the CQs
         * ({@code ibv_poll_cq}) in a loop, a core busy; {@link PollingMode#ADAPTIVE} polls while there is work, then
         * backs off into epoll. A server has one engine for all its connections; a client has one per connection
         * (share one with {@link #engine} for many busy-polled connections).
         *
         * <p>Beside {@link #busyPoll}: that one is about the application's threads (a blocking {@code receive} or
         * {@code send} that waits spins on the connection's CQ itself), this one about the engine's thread, which
         * completes the futures ({@code receiveAsync}, ...) and handles what completes while no caller waits. They
         * combine freely; a blocking caller sleeps on the connection's own completion channel only with an engine in
         * {@link PollingMode#EVENT} mode, and otherwise waits for the engine's thread to deliver.
         *
         * @param mode EVENT, BUSY_POLL or ADAPTIVE
         * @return this builder
         * @throws NullPointerException if {@code mode} is null
         */
        public Builder pollingMode(PollingMode mode) {
            this.pollingMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * The options.
         *
         * @return immutable options
         * @throws IllegalStateException if both {@link #pollingMode} and {@link #engine} were given: the caller's
         *                               engine has its own mode, set where it is built
         */
        public RdmaOptions build() {
            if (pollingMode != null && engine != null) {
                throw new IllegalStateException("pollingMode(" + pollingMode + ") is for the engine the server or"
                        + " connection makes itself; the engine given to engine(...) has its own mode ("
                        + engine.mode() + "): set one or the other");
            }
            return new RdmaOptions(this);
        }

        private static Duration defaultTimeout() {
            String p = System.getProperty(TIMEOUT_PROPERTY);
            if (p == null) {
                return Duration.ofSeconds(30);
            }
            try {
                Duration d = Duration.parse(p);
                if (!d.isNegative() && !d.isZero()) {
                    return Timeouts.clamp(d);
                }
            } catch (java.time.format.DateTimeParseException e) {
                // reported below
            }
            throw new IllegalArgumentException("-D" + TIMEOUT_PROPERTY + "=" + p
                    + " is no positive ISO-8601 duration (e.g. PT2M)");
        }

        private static int positive(int n, String what) {
            if (n < 1) {
                throw new IllegalArgumentException(what + " must be at least 1: " + n);
            }
            return n;
        }
    }
}
