package dev.rdma4j.tools.rping;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.ConnectionSetup;
import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.WorkRequestException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One rping connection, as the C tool's control block ({@code struct rping_cb}) holds it: a PD, a CQ of
 * {@code 2 * RPING_SQ_DEPTH} entries, an RC queue pair (16 sends, 2 receives, one SGE each), the 16-byte
 * receive and send buffers, the {@code -S}-byte RDMA buffer and, on the client, the RDMA source buffer;
 * and the ping loop of either side with the C tool's state machine and messages.
 *
 * <p>The protocol, per ping: the client sends the descriptor of its source buffer; the server RDMA-reads
 * it into its own buffer and sends a go-ahead; the client sends the descriptor of its sink buffer; the
 * server RDMA-writes the ping data (up to and with its NUL) there and sends a go-ahead. One receive is
 * posted at all times, re-posted as soon as a message arrived and before anything is sent in return.
 */
final class RpingSession implements AutoCloseable {
    /** {@code RPING_SQ_DEPTH}. */
    static final int SQ_DEPTH = 16;
    /** How long a flushed request waits for the DISCONNECTED event that explains it. */
    private static final Duration DISCONNECT_EVENT_WAIT = Duration.ofSeconds(5);
    /** How long an own disconnect waits for its DISCONNECTED event (the peer's DREP). */
    private static final Duration OWN_DISCONNECT_WAIT = Duration.ofSeconds(2);
    /** How long closing waits for rdma4j to release a resource a failed connection set-up used. */
    private static final Duration RELEASE_WAIT = Duration.ofSeconds(5);

    private final RpingOptions options;
    private final CompletionEngine engine;
    private final PrintWriter out;
    private final PrintWriter err;
    private final String role;

    // created by the connection setup on the engine thread, used and closed by the session's thread
    private volatile ProtectionDomain pd;
    private volatile CompletionQueue cq;
    private volatile MemoryRegion recvBuf;
    private volatile MemoryRegion sendBuf;
    private volatile MemoryRegion rdmaBuf;
    private volatile MemoryRegion startBuf;

    private CmConnection connection;
    private AsyncQueuePair queuePair;
    private CompletableFuture<Void> disconnectEvent;
    private volatile boolean closing;

    private RpingState state;
    private CompletableFuture<WorkCompletion> receive;
    private CompletableFuture<WorkCompletion> lastSend = CompletableFuture.completedFuture(null);
    private BufferDescriptor peerBuffer;

    /**
     * A session, not yet connected.
     *
     * @param options the settings
     * @param engine  the engine that drives the CQ
     * @param out     for the ping data and debug lines
     * @param err     for the C tool's error lines
     */
    RpingSession(RpingOptions options, CompletionEngine engine, PrintWriter out, PrintWriter err) {
        this.options = options;
        this.engine = engine;
        this.out = out;
        this.err = err;
        this.role = options.server() ? "server" : "client";
        this.state = options.server() ? RpingState.CONNECT_REQUEST : RpingState.IDLE;
    }

    /**
     * What {@code rping_setup_qp} and {@code rping_setup_buffers} allocate, for {@code rdma_create_qp}.
     *
     * @return the setup for {@code CmConnection.connect} or {@code CmConnectionRequest.accept}
     */
    ConnectionSetup setup() {
        return ctx -> {
            pd = ctx.allocateProtectionDomain();
            debug("created pd %s", pd);
            cq = engine.createCompletionQueue(ctx, SQ_DEPTH * 2);
            debug("created cq %s", cq);
            recvBuf = pd.allocate(BufferDescriptor.BYTES, AccessFlag.LOCAL_WRITE);
            sendBuf = pd.allocate(BufferDescriptor.BYTES);
            rdmaBuf = pd.allocate(options.size(), AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ,
                    AccessFlag.REMOTE_WRITE);
            if (!options.server()) {
                startBuf = pd.allocate(options.size(), AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ,
                        AccessFlag.REMOTE_WRITE);
            }
            debug("allocated & registered buffers...");
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(SQ_DEPTH, 2).maxSge(1, 1);
        };
    }

    /**
     * Takes the established connection and posts the first receive. (The C tool posts it before
     * connecting; rdma4j hands out the queue pair only once it is established, so a peer that sends at
     * once may meet an RNR NAK first, which rdma_cm's {@code rnr_retry_count} of 7 retries for ever.)
     *
     * @param c the connection
     * @return whether the receive could be posted
     */
    boolean attach(CmConnection c) {
        connection = c;
        disconnectEvent = c.disconnectedAsync().thenRun(() -> {
            if (!closing) {
                err.printf("%s DISCONNECT EVENT...%n", role);
            }
        });
        queuePair = engine.wrap(c.queuePair());
        if (!options.server()) {
            state = RpingState.CONNECTED;
        }
        receive = queuePair.receiveAsync(recvBuf, 0, BufferDescriptor.BYTES);
        Throwable refused = refusal(receive);
        if (refused != null) {
            err.printf("ibv_post_recv failed: %d%n", errno(refused));
            return false;
        }
        return true;
    }

    // ------------------------------------------------------------------ the client

    /**
     * {@code rping_test_client}: {@code -C} pings (no end with 0).
     *
     * @return 0, also when the server disconnected; -1 on failure
     * @throws InterruptedException if interrupted
     */
    int runClient() throws InterruptedException {
        PingPattern pattern = new PingPattern();
        int size = options.size();
        int ret = 0;
        for (int ping = 0; options.count() == 0 || ping < options.count(); ping++) {
            state = RpingState.RDMA_READ_ADV;
            byte[] data = pattern.next(ping, size);
            // the previous descriptor must be on its way before the buffer is rewritten
            if (awaitLastSend()) {
                MemorySegment.copy(data, 0, startBuf.segment(), ValueLayout.JAVA_BYTE, 0, size);
                ret = send(BufferDescriptor.of(startBuf, size));
                if (ret != 0) {
                    break;
                }
            }
            // wait for the server's go-ahead after its RDMA read
            awaitReceive();
            if (state != RpingState.RDMA_WRITE_ADV) {
                err.printf("wait for RDMA_WRITE_ADV state %d%n", state.code());
                ret = -1;
                break;
            }
            if (awaitLastSend()) {
                ret = send(BufferDescriptor.of(rdmaBuf, size));
                if (ret != 0) {
                    break;
                }
            }
            // wait for the server to say the RDMA write is complete
            awaitReceive();
            if (state != RpingState.RDMA_WRITE_COMPLETE) {
                err.printf("wait for RDMA_WRITE_COMPLETE state %d%n", state.code());
                ret = -1;
                break;
            }
            if (options.validate() && startBuf.segment().asSlice(0, size).mismatch(rdmaBuf.segment()
                    .asSlice(0, size)) >= 0) {
                err.println("data mismatch!");
                ret = -1;
                break;
            }
            if (options.verbose()) {
                out.printf("ping data: %s%n", PingPattern.cString(rdmaBuf.segment(), size));
            }
        }
        return state == RpingState.DISCONNECTED ? 0 : ret;
    }

    // ------------------------------------------------------------------ the server

    /**
     * {@code rping_test_server}: serves pings until the client disconnects.
     *
     * @return 0 when the client disconnected, -1 on failure
     * @throws InterruptedException if interrupted
     */
    int runServer() throws InterruptedException {
        int ret;
        for (;;) {
            // wait for the client's source buffer
            awaitReceive();
            if (state != RpingState.RDMA_READ_ADV) {
                err.printf("wait for RDMA_READ_ADV state %d%n", state.code());
                ret = -1;
                break;
            }
            debug("server received sink adv");
            BufferDescriptor source = peerBuffer;
            if (Integer.toUnsignedLong(source.size()) > options.size()) {
                // the C server posts the read anyway and gets a local protection error (status 4)
                err.printf("the client's ping data (%d bytes) does not fit this server's buffer (-S %d)%n",
                        Integer.toUnsignedLong(source.size()), options.size());
                state = RpingState.ERROR;
            } else {
                debug("server posted rdma read req ");
                if (await(queuePair.readAsync(rdmaBuf, 0, source.size(), source.remote(source.size()), 0),
                        true) != null) {
                    state = RpingState.RDMA_READ_COMPLETE;
                }
            }
            if (state != RpingState.RDMA_READ_COMPLETE) {
                err.printf("wait for RDMA_READ_COMPLETE state %d%n", state.code());
                ret = -1;
                break;
            }
            debug("server received read complete");
            if (options.verbose()) {
                out.printf("server ping data: %s%n", PingPattern.cString(rdmaBuf.segment(), options.size()));
            }
            // tell the client to continue
            ret = goAhead();
            if (ret != 0) {
                break;
            }
            // wait for the client's sink buffer
            awaitReceive();
            if (state != RpingState.RDMA_WRITE_ADV) {
                err.printf("wait for RDMA_WRITE_ADV state %d%n", state.code());
                ret = -1;
                break;
            }
            debug("server received sink adv");
            BufferDescriptor sink = peerBuffer;
            int length = Math.min(PingPattern.strlen(rdmaBuf.segment(), options.size()) + 1, options.size());
            debug("rdma write from lkey %x laddr %x len %d", rdmaBuf.lkey(), rdmaBuf.address(), length);
            if (await(queuePair.writeAsync(rdmaBuf, 0, length, sink.remote(length), 0), true) != null) {
                state = RpingState.RDMA_WRITE_COMPLETE;
            }
            if (state != RpingState.RDMA_WRITE_COMPLETE) {
                err.printf("wait for RDMA_WRITE_COMPLETE state %d%n", state.code());
                ret = -1;
                break;
            }
            debug("server rdma write complete ");
            // tell the client to begin again
            ret = goAhead();
            if (ret != 0) {
                break;
            }
        }
        return state == RpingState.DISCONNECTED ? 0 : ret;
    }

    /** The server's go-ahead: its send buffer, never written, 16 zero bytes. */
    private int goAhead() throws InterruptedException {
        if (!awaitLastSend()) {
            return 0; // the state tells: the next wait reports it
        }
        int ret = post(queuePair.sendAsync(sendBuf, 0, BufferDescriptor.BYTES));
        if (ret == 0) {
            debug("server posted go ahead");
        }
        return ret;
    }

    // ------------------------------------------------------------------ completions

    private int send(BufferDescriptor d) {
        d.encode(sendBuf.segment(), 0);
        debug("RDMA addr %x rkey %x len %d", d.address(), d.rkey(), d.size());
        return post(queuePair.sendAsync(sendBuf, 0, BufferDescriptor.BYTES));
    }

    /** Keeps a posted send; a refused post is the C tool's "post send error". */
    private int post(CompletableFuture<WorkCompletion> send) {
        Throwable refused = refusal(send);
        if (refused != null) {
            int errno = errno(refused);
            err.printf("post send error %d%n", errno);
            return errno;
        }
        lastSend = send;
        return 0;
    }

    /** Whether the last send went out; if not, the state says why (DISCONNECTED or ERROR). */
    private boolean awaitLastSend() throws InterruptedException {
        return await(lastSend, false) != null || !lastSend.isCompletedExceptionally();
    }

    /**
     * Waits for the posted receive, then does what the C tool's CQ handler does with it: checks its
     * length, takes the server's descriptor, moves the state on and posts the next receive.
     */
    private void awaitReceive() throws InterruptedException {
        if (state == RpingState.DISCONNECTED || state == RpingState.ERROR) {
            return; // the C tool's semaphore was posted with this state already
        }
        WorkCompletion wc = await(receive, true);
        if (wc == null) {
            return;
        }
        if (wc.byteLength() != BufferDescriptor.BYTES) {
            err.printf("Received bogus data, size %d%n", wc.byteLength());
            err.printf("recv wc error: %d%n", -1);
            state = RpingState.ERROR;
            return;
        }
        if (options.server()) {
            peerBuffer = BufferDescriptor.decode(recvBuf.segment(), 0);
            debug("Received rkey %x addr %x len %d from peer", peerBuffer.rkey(), peerBuffer.address(),
                    peerBuffer.size());
            state = state.code() <= RpingState.CONNECTED.code() || state == RpingState.RDMA_WRITE_COMPLETE
                    ? RpingState.RDMA_READ_ADV : RpingState.RDMA_WRITE_ADV;
        } else {
            state = state == RpingState.RDMA_READ_ADV ? RpingState.RDMA_WRITE_ADV : RpingState.RDMA_WRITE_COMPLETE;
        }
        receive = queuePair.receiveAsync(recvBuf, 0, BufferDescriptor.BYTES);
        Throwable refused = refusal(receive);
        if (refused != null) {
            err.printf("post recv error: %d%n", errno(refused));
            state = RpingState.ERROR;
        }
    }

    /**
     * Waits for a work request and returns its completion; on failure returns {@code null} with the state
     * the C tool would be in: a flushed request means the connection went down (DISCONNECTED once the
     * rdma_cm event is there), any other status is reported as "cq completion failed status N" (ERROR).
     * With {@code watchSend}, a failing earlier send ends the wait first, as it comes first in the CQ.
     */
    private WorkCompletion await(CompletableFuture<WorkCompletion> f, boolean watchSend) throws InterruptedException {
        CompletableFuture<WorkCompletion> send = lastSend;
        if (watchSend && send != f) {
            CompletableFuture<Object> sendFailed = new CompletableFuture<>();
            send.whenComplete((wc, t) -> {
                if (t != null) {
                    sendFailed.complete(null);
                }
            });
            try {
                CompletableFuture.anyOf(f, sendFailed).get();
            } catch (ExecutionException e) {
                // f failed: looked at below
            }
            if (send.isCompletedExceptionally() && !isFlush(cause(send))) {
                return failed(cause(send));
            }
        }
        try {
            WorkCompletion wc = f.get();
            if (wc != null && options.debug()) {
                debug(switch (wc.opcode()) {
                    case SEND -> "send completion";
                    case RDMA_WRITE -> "rdma write completion";
                    case RDMA_READ -> "rdma read completion";
                    case RECV -> "recv completion";
                    default -> "unknown!!!!! completion";
                });
            }
            return wc;
        } catch (ExecutionException e) {
            return failed(e.getCause());
        }
    }

    private WorkCompletion failed(Throwable t) throws InterruptedException {
        if (isFlush(t)) {
            try {
                disconnectEvent.get(DISCONNECT_EVENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                state = RpingState.DISCONNECTED;
            } catch (TimeoutException | ExecutionException e) {
                state = RpingState.ERROR;
            }
        } else if (t instanceof WorkRequestException w) {
            err.printf("cq completion failed status %d%n", w.status().code());
            state = RpingState.ERROR;
        } else {
            err.printf("%s%n", t.getMessage());
            state = RpingState.ERROR;
        }
        return null;
    }

    private static boolean isFlush(Throwable t) {
        return t instanceof WorkRequestException w && w.status() == WcStatus.WR_FLUSH_ERR;
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.join();
            return null;
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            return e.getCause() != null ? e.getCause() : e;
        }
    }

    /** The verb's refusal of a post (the future failed at once), or null. */
    private static Throwable refusal(CompletableFuture<WorkCompletion> f) {
        if (!f.isCompletedExceptionally()) {
            return null;
        }
        Throwable t = cause(f);
        return t instanceof WorkRequestException ? null : t;
    }

    private static int errno(Throwable t) {
        return t instanceof VerbsException v ? v.errno() : -1;
    }

    // ------------------------------------------------------------------ teardown

    /**
     * {@code rping_disconnect}: {@code rdma_disconnect}, then a short wait for the DISCONNECTED event
     * (the C tool's CM thread prints "... DISCONNECT EVENT..." when it comes before the tool exits).
     *
     * @throws InterruptedException if interrupted
     */
    void disconnect() throws InterruptedException {
        if (connection == null) {
            return;
        }
        try {
            connection.disconnect();
        } catch (VerbsException e) {
            debug("rdma_disconnect: %s", e.errnoText());
        }
        try {
            disconnectEvent.get(OWN_DISCONNECT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // the peer did not answer: exit all the same, as the C tool does
        }
    }

    /** Destroys the queue pair and the id, then the buffers, the CQ and the PD. Idempotent. */
    @Override
    public void close() {
        closing = true;
        try {
            if (queuePair != null) {
                queuePair.close();
            }
        } finally {
            try {
                if (connection != null) {
                    connection.close();
                }
            } finally {
                closeAll(startBuf, rdmaBuf, sendBuf, recvBuf, cq, pd);
            }
        }
    }

    /**
     * Closes each resource; one still in use is retried for a moment, because a failed
     * {@code CmConnection.connect} or {@code accept} completes its future before rdma4j has destroyed the
     * queue pair it created on this session's CQ and PD.
     */
    private static void closeAll(AutoCloseable... resources) {
        RuntimeException first = null;
        long deadline = System.nanoTime() + RELEASE_WAIT.toNanos();
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                closePatiently(r, deadline);
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException re ? re : new IllegalStateException(e.getMessage(), e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static void closePatiently(AutoCloseable r, long deadline) throws Exception {
        for (;;) {
            try {
                r.close();
                return;
            } catch (IllegalStateException stillUsed) {
                if (System.nanoTime() > deadline) {
                    throw stillUsed;
                }
                Thread.onSpinWait();
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private void debug(String format, Object... args) {
        if (options.debug()) {
            out.printf(format + "%n", args);
        }
    }
}
