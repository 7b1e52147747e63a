package dev.rdma4j.tools.cmatose;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.ConnectionSetup;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One connection, as {@code struct cmatest_node} holds it: a PD, a send and a receive CQ of {@code -C} entries
 * each (one completion channel for both, so the calling thread can wait instead of spinning), an RC queue pair of
 * {@code -C} sends and receives with one SGE each that signals every send ({@code sq_sig_all}), and one
 * {@code -S}-byte buffer that every send and receive uses.
 *
 * <p>Threading: {@link #setup} runs on the engine thread on the client and on the run's thread on the server; the
 * rest on the run's thread. The fields the setup writes are volatile, and the run reads them only after the
 * connection attempt completed.
 */
final class CmatoseNode {
    /** {@code ENOMEM}. */
    static final int ENOMEM = 12;
    /** How long a wait for completions may last: as the C tool, until they come (or flush). */
    private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE);

    /** The run's counts: the message count is shared by all nodes and cleared by {@code -S 0}. */
    interface Messages {
        /**
         * {@code message_count} now.
         *
         * @return the count
         */
        int count();

        /** {@code create_message}'s {@code if (!message_size) message_count = 0}. */
        void none();

        /**
         * {@code message_size}.
         *
         * @return bytes
         */
        int size();
    }

    /**
     * The set-up of a node failed: what the C tool prints (on stdout) and returns.
     */
    static final class SetupException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** The C function's return value. */
        private final int ret;
        /** The lines it printed, in order. */
        private final String[] lines;

        /**
         * A failure.
         *
         * @param ret   the return value
         * @param lines the lines printed on stdout
         */
        SetupException(int ret, List<String> lines) {
            super(String.join("; ", lines), null, false, false);
            this.ret = ret;
            this.lines = lines.toArray(String[]::new);
        }

        /**
         * The return value.
         *
         * @return e.g. {@code -ENOMEM}
         */
        int ret() {
            return ret;
        }

        /**
         * Prints the lines.
         *
         * @param out stdout
         */
        void print(PrintWriter out) {
            for (String line : lines) {
                out.println(line);
            }
        }
    }

    private final int id;
    private final Messages messages;

    private volatile ProtectionDomain pd;
    private volatile CompletionChannel completionChannel;
    private volatile CompletionQueue sendCq;
    private volatile CompletionQueue recvCq;
    private volatile MemoryRegion mr;
    private volatile QueuePair qp;

    /** The connection attempt ({@code rdma_connect} or {@code rdma_accept}), until its outcome is handled. */
    CompletableFuture<CmConnection> attempt;
    /** Set by {@code RDMA_CM_EVENT_ESTABLISHED}. */
    CmConnection connection;
    /** {@code node->connected}. */
    boolean connected;

    /**
     * A node, not yet connected.
     *
     * @param id       its index ({@code node->id})
     * @param messages the run's message count and size
     */
    CmatoseNode(int id, Messages messages) {
        this.id = id;
        this.messages = messages;
    }

    /**
     * The node's index.
     *
     * @return {@code node->id}
     */
    int id() {
        return id;
    }

    /**
     * {@code init_node} and {@code post_recvs}, for {@code rdma_connect} (the client's {@code route_handler}) or
     * {@code rdma_accept} (the server's {@code connect_handler}). rdma4j calls {@code rdma_create_qp} between
     * {@link ConnectionSetup#configure} and {@link ConnectionSetup#beforeConnect}, so the buffer is registered after
     * the QP is created, as in C. The connection parameters are cmatose's: the client asks for {@code retry_count} 5,
     * {@code rnr_retry_count} 0 and one read each way; the server's {@code rdma_accept(id, NULL)} means 7, 7 and
     * the client's read depth.
     *
     * @param client whether this is the client's node
     * @return the setup
     */
    ConnectionSetup setup(boolean client) {
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context context) {
                return init(context);
            }

            @Override
            public void beforeConnect(QueuePair queuePair) {
                qp = queuePair;
                createMessage();
                postRecvs();
            }

            @Override
            public int retryCount() {
                return client ? 5 : 7;
            }

            @Override
            public int rnrRetryCount() {
                return client ? 0 : 7;
            }

            @Override
            public int readDepth() {
                return 1;
            }
        };
    }

    /**
     * {@code init_node} up to {@code rdma_create_qp}: the PD ({@code ibv_alloc_pd}) and the CQs
     * ({@code ibv_create_cq}), of {@code -C} entries, or one when {@code -C} is 0.
     */
    private QueuePairBuilder init(Context context) {
        try {
            pd = context.allocateProtectionDomain();
        } catch (VerbsException e) {
            throw new SetupException(-ENOMEM, List.of("cmatose: unable to allocate PD"));
        }
        int cqe = messages.count() != 0 ? messages.count() : 1;
        try {
            completionChannel = context.createCompletionChannel();
            sendCq = context.createCompletionQueue(cqe, completionChannel, 0);
            recvCq = context.createCompletionQueue(cqe, completionChannel, 0);
        } catch (VerbsException | IllegalArgumentException e) {
            throw new SetupException(-ENOMEM, List.of("cmatose: unable to create CQ"));
        }
        return QueuePair.builder(pd, QpType.RC).sendCompletionQueue(sendCq).receiveCompletionQueue(recvCq)
                .capacity(cqe, cqe).maxSge(1, 1).signalAll(true);
    }

    /** {@code create_message}: the buffer, {@code malloc} and {@code ibv_reg_mr} with local write access. */
    private void createMessage() {
        if (messages.size() == 0) {
            messages.none();
        }
        if (messages.count() == 0) {
            return;
        }
        List<String> lines = new ArrayList<>();
        if (messages.size() < 0) {
            lines.add("failed message allocation"); // malloc((size_t) message_size)
        } else {
            try {
                mr = qp.protectionDomain().allocate(messages.size(), AccessFlag.LOCAL_WRITE);
                return;
            } catch (VerbsException e) {
                lines.add(e.verb().equals("malloc") ? "failed message allocation" : "failed to reg MR");
            }
        }
        lines.add("cmatose: failed to create messages: -1");
        throw new SetupException(-1, lines);
    }

    /** {@code post_recvs}: {@code -C} receives of the whole buffer ({@code ibv_post_recv}). */
    private void postRecvs() {
        for (int i = 0; i < messages.count(); i++) {
            try {
                qp.postReceive(id, mr, 0, messages.size());
            } catch (VerbsException e) {
                throw new SetupException(e.errno(), List.of("failed to post receives: " + e.errno()));
            }
        }
    }

    /**
     * {@code post_sends}: {@code -C} sends of the whole buffer ({@code ibv_post_send}, {@code IBV_WR_SEND}), if
     * connected.
     *
     * @param out stdout, for the C tool's line on a refused post
     * @return 0, or the refused post's errno
     */
    int postSends(PrintWriter out) {
        if (!connected || messages.count() == 0) {
            return 0;
        }
        for (int i = 0; i < messages.count(); i++) {
            try {
                qp.postSend(id, mr, 0, messages.size());
            } catch (VerbsException e) {
                out.printf("failed to post sends: %d%n", e.errno());
                return e.errno();
            }
        }
        return 0;
    }

    /**
     * {@code poll_cqs} for this node: waits until {@code -C} completions came to one of its CQs, whatever their
     * status (a flushed request counts, as in C). Where C spins on {@code ibv_poll_cq}, this waits on the CQ's
     * completion channel between polls ({@code ibv_req_notify_cq}, {@code ibv_get_cq_event}).
     *
     * @param send    the send CQ, else the receive CQ
     * @param wcs     the batch to poll into (8 entries, as C's {@code wc[8]})
     * @param out     stdout, for the C tool's line on a failed poll
     * @return 0, or the failed poll's negative errno
     * @throws InterruptedException if interrupted while waiting
     */
    int pollCq(boolean send, WorkCompletions wcs, PrintWriter out) throws InterruptedException {
        CompletionQueue cq = send ? sendCq : recvCq;
        for (int done = 0; done < messages.count();) {
            try {
                done += cq.await(wcs, FOREVER);
            } catch (VerbsException e) {
                out.printf("cmatose: failed polling CQ: %d%n", -e.errno());
                return -e.errno();
            }
        }
        return 0;
    }

    /**
     * {@code rdma_disconnect}; as in C, its outcome is not looked at.
     */
    void disconnect() {
        try {
            connection.disconnect();
        } catch (VerbsException | IllegalStateException e) {
            // the C tool ignores rdma_disconnect's return value
        }
    }

    /**
     * {@code destroy_node}: the QP and the rdma_cm id ({@code rdma_destroy_qp}, {@code rdma_destroy_id}), the CQs,
     * the buffer and the PD. An attempt still in progress cannot be cancelled in rdma4j (C destroys its id): it is
     * waited for first, at most {@code wait}.
     *
     * @param wait how long to wait for an attempt in progress
     * @param err  stderr, for what could not be closed
     */
    void destroy(Duration wait, PrintWriter err) {
        CompletableFuture<CmConnection> a = attempt;
        if (a != null && !a.isDone()) {
            try {
                a.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // a failure is closed by rdma4j; a timeout leaves the attempt to the CM
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // close what can be closed, and let the caller see it
            }
        }
        if (a != null && a.isDone() && !a.isCompletedExceptionally()) {
            close(a.getNow(null), err);
        }
        close(connection, err);
        close(sendCq, err);
        close(recvCq, err);
        close(completionChannel, err);
        close(mr, err);
        close(pd, err);
    }

    private static void close(AutoCloseable resource, PrintWriter err) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            err.printf("cmatose: %s%n", e.getMessage());
        }
    }
}
