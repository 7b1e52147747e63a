package dev.rdma4j.tools.cmatose;

import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmException;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;

/**
 * ucmatose's {@code main} after option parsing: {@code run_server} and {@code run_client} with
 * {@code connect_events}, {@code disconnect_events} and {@code cma_handler}, the C tool's lines and its return
 * values (the exit status is {@code main}'s return value, so -1 exits 255).
 *
 * <p>The rdma_cm events come as C's {@code rdma_get_cm_event} returns them, one at a time on the run's thread, but
 * as rdma4j reports them: a connection request ({@link CmListener#nextRequestAsync}), the outcome of a connect or
 * an accept ({@link CmConnection#connectAsync}, {@link CmConnectionRequest#acceptAsync}: ESTABLISHED, or the error
 * event), and a disconnect ({@link CmConnection#disconnectedAsync}, after which rdma4j has already called
 * {@code rdma_disconnect} as {@code cma_handler} does). Address and route resolution happen inside rdma4j's connect.
 */
final class CmatoseRunner implements CmatoseNode.Messages {
    /** {@code rdma_resolve_addr} and {@code rdma_resolve_route} time-outs of the C tool, 2000 ms each. */
    static final Duration RESOLVE_TIMEOUT = Duration.ofMillis(2000);
    /**
     * The whole connect: the C tool has no deadline of its own and waits for the CM's answer (an unanswered request
     * ends in UNREACHABLE after the CM's retries); this only bounds a CM that never answers.
     */
    static final Duration CONNECT_TIMEOUT = Duration.ofMinutes(5);
    /** {@code rdma_listen}'s backlog in {@code run_server}. */
    static final int BACKLOG = 0;
    private static final int ENODEV = 19;
    private static final int ETIMEDOUT = 110;
    private static final byte[] NO_PRIVATE_DATA = new byte[0];

    /** An rdma_cm event as {@code cma_handler} sees it. */
    private sealed interface Event {
    }

    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}. */
    private record Request(CmConnectionRequest request) implements Event {
    }

    /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
    private record Established(CmatoseNode node, CmConnection connection) implements Event {
    }

    /** The event or the call that ended a connection attempt ({@code ADDR_ERROR} ... {@code REJECTED}). */
    private record Failed(CmatoseNode node, Throwable cause) implements Event {
    }

    /** {@code RDMA_CM_EVENT_DISCONNECTED}. */
    private record Disconnected(CmatoseNode node) implements Event {
    }

    private final CmatoseOptions options;
    private final PrintWriter out;
    private final PrintWriter err;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private CmatoseNode[] nodes = new CmatoseNode[0];
    private int connIndex;
    private int connectsLeft;
    private int disconnectsLeft;
    /** {@code message_count}: written on the engine thread by a client's set-up when {@code -S} is 0. */
    private volatile int messageCount;

    /**
     * A runner.
     *
     * @param options the settings
     * @param out     stdout
     * @param err     stderr
     */
    CmatoseRunner(CmatoseOptions options, PrintWriter out, PrintWriter err) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.messageCount = options.messageCount();
    }

    @Override
    public int count() {
        return messageCount;
    }

    @Override
    public void none() {
        messageCount = 0;
    }

    @Override
    public int size() {
        return options.messageSize();
    }

    /**
     * {@code main} from {@code create_first_event_channel} on: runs the server or the client, prints
     * {@code "test complete"}, destroys the nodes and prints the return status.
     *
     * @return {@code main}'s return value
     * @throws VerbsException       if the engine cannot be created
     * @throws InterruptedException if interrupted
     */
    int run() throws VerbsException, InterruptedException {
        connectsLeft = options.connections();
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("ucmatose-engine")
                .build()) {
            CmEventChannel channel;
            try {
                channel = CmEventChannel.create(engine);
            } catch (VerbsException e) {
                if (e.errno() == ENODEV) {
                    err.println("No RDMA devices were detected");
                } else {
                    err.printf("failed to create RDMA CM event channel: %s%n", e.errnoText());
                }
                return 1;
            }
            try {
                try {
                    nodes = new CmatoseNode[options.connections()];
                } catch (NegativeArraySizeException | OutOfMemoryError e) { // malloc(sizeof *test.nodes * connections)
                    out.println("cmatose: unable to allocate memory for test nodes");
                    return 1;
                }
                for (int i = 0; i < nodes.length; i++) {
                    nodes[i] = new CmatoseNode(i, this);
                }
                int ret;
                boolean completed = false;
                try {
                    ret = options.client() ? runClient(channel) : runServer(channel);
                    completed = true;
                    out.println("test complete");
                } finally { // interrupted (or failed): no waiting for attempts in progress
                    destroyNodes(completed ? CONNECT_TIMEOUT : Duration.ZERO);
                }
                out.printf("return status %d%n", ret);
                return ret;
            } finally {
                try {
                    channel.close();
                } catch (IllegalStateException e) { // an attempt that never settled: its id is still there
                    err.printf("cmatose: %s%n", e.getMessage());
                }
            }
        }
    }

    // ------------------------------------------------------------------ the server

    private int runServer(CmEventChannel channel) throws InterruptedException {
        out.println("cmatose: starting server");
        InetSocketAddress address;
        try {
            int port = AddrInfo.port(options.port(), AddrInfo.SERVICES);
            InetAddress host = options.bind() == null ? InetAddress.getByAddress(new byte[4])
                    : AddrInfo.host(options.bind(), options.numericHost());
            address = new InetSocketAddress(host, port);
        } catch (AddrInfo.LookupException e) {
            out.printf("cmatose: getrdmaaddr error: %s%n", e.getMessage());
            return e.code();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e); // not for 4 bytes
        }
        CmListener listener;
        try {
            listener = CmListener.listen(channel, address, BACKLOG);
        } catch (VerbsException e) {
            perror(switch (e.verb()) {
                case "rdma_create_id" -> "cmatose: listen request failed";
                case "rdma_bind_addr" -> "cmatose: bind address failed";
                default -> "cmatose: failure trying to listen";
            }, e);
            return -1;
        }
        try (listener) {
            takeRequests(listener);
            int ret = connectEvents();
            if (ret != 0) {
                return ret;
            }
            if (messageCount != 0) {
                out.println("initiating data transfers");
                for (CmatoseNode node : nodes) {
                    ret = node.postSends(out);
                    if (ret != 0) {
                        return ret;
                    }
                }
                out.println("completing sends");
                ret = pollCqs(true);
                if (ret != 0) {
                    return ret;
                }
                out.println("receiving data transfers");
                ret = pollCqs(false);
                if (ret != 0) {
                    return ret;
                }
                out.println("data transfers complete");
            }
            out.println("cmatose: disconnecting");
            for (CmatoseNode node : nodes) {
                if (!node.connected) {
                    continue;
                }
                node.connected = false;
                node.disconnect();
            }
            ret = disconnectEvents();
            out.println("disconnected");
            return ret;
        }
    }

    /** Every connection request of the listener becomes an event, until it closes. */
    private void takeRequests(CmListener listener) {
        listener.nextRequestAsync().whenComplete((request, closed) -> {
            if (request != null) {
                events.add(new Request(request));
                takeRequests(listener);
            }
        });
    }

    /** {@code connect_handler}: a node for the request, set up ({@code init_node}, {@code post_recvs}) and accepted. */
    private int connectHandler(CmConnectionRequest request) {
        if (connIndex == nodes.length) {
            out.println("cmatose: failing connection request");
            try {
                request.reject(NO_PRIVATE_DATA);
            } catch (VerbsException | IllegalStateException e) {
                // rdma_reject's return value is not looked at
            }
            return -CmatoseNode.ENOMEM;
        }
        CmatoseNode node = nodes[connIndex++];
        CompletableFuture<CmConnection> accepted = request.acceptAsync(node.setup(false), NO_PRIVATE_DATA);
        node.attempt = accepted;
        Throwable failed = accepted.isCompletedExceptionally() ? cause(accepted) : null;
        if (failed != null && !(failed instanceof CmException)) {
            // the set-up or rdma_accept failed, in acceptAsync: rdma4j destroyed the id, which rejects the request
            int ret = connectFailed(failed);
            out.println("cmatose: failing connection request"); // C's err2: the request is rejected
            return ret;
        }
        accepted.whenComplete((c, t) -> events.add(t == null ? new Established(node, c) : new Failed(node, unwrap(t))));
        return 0;
    }

    // ------------------------------------------------------------------ the client

    private int runClient(CmEventChannel channel) throws InterruptedException {
        out.println("cmatose: starting client");
        InetSocketAddress source = null;
        InetSocketAddress server;
        try {
            if (options.bind() != null) {
                source = new InetSocketAddress(AddrInfo.host(options.bind(), options.numericHost()), 0);
            }
            int port = AddrInfo.port(options.port(), AddrInfo.SERVICES);
            server = new InetSocketAddress(AddrInfo.host(options.server(), options.numericHost()), port);
        } catch (AddrInfo.LookupException e) {
            out.printf("cmatose: getaddrinfo error: %s%n", e.getMessage());
            return e.code();
        }
        out.println("cmatose: connecting");
        for (CmatoseNode node : nodes) {
            CompletableFuture<CmConnection> connected = CmConnection.connectAsync(channel, source, server,
                    node.setup(true), NO_PRIVATE_DATA, RESOLVE_TIMEOUT, CONNECT_TIMEOUT);
            node.attempt = connected;
            if (connected.isCompletedExceptionally() && cause(connected) instanceof VerbsException v
                    && v.verb().matches("rdma_create_id|rdma_bind_addr|rdma_resolve_addr")) {
                perror("cmatose: failure getting addr", v); // rdma_resolve_addr(id, src, dst, 2000) failed
                connectsLeft--;
                return -1;
            }
            connected.whenComplete((c, t) -> events.add(t == null ? new Established(node, c)
                    : new Failed(node, unwrap(t))));
        }
        int ret = connectEvents();
        if (ret == 0 && messageCount != 0) {
            out.println("receiving data transfers");
            ret = pollCqs(false);
            if (ret == 0) {
                out.println("sending replies");
                for (CmatoseNode node : nodes) {
                    ret = node.postSends(out);
                    if (ret != 0) {
                        break;
                    }
                }
                if (ret == 0) {
                    out.println("data transfers complete");
                }
            }
        }
        int ret2 = disconnectEvents();
        return ret2 != 0 ? ret2 : ret;
    }

    // ------------------------------------------------------------------ events

    /** {@code connect_events}: handles events until every connection is established or one fails. */
    private int connectEvents() throws InterruptedException {
        int ret = 0;
        while (connectsLeft != 0 && ret == 0) {
            ret = handle(events.take());
        }
        return ret;
    }

    /** {@code disconnect_events}: handles events until every established connection is disconnected. */
    private int disconnectEvents() throws InterruptedException {
        int ret = 0;
        while (disconnectsLeft != 0 && ret == 0) {
            ret = handle(events.take());
        }
        return ret;
    }

    /** {@code cma_handler}. */
    private int handle(Event event) {
        return switch (event) {
            case Request r -> connectHandler(r.request());
            case Established e -> {
                CmatoseNode node = e.node();
                node.connection = e.connection();
                node.connected = true;
                connectsLeft--;
                disconnectsLeft++;
                e.connection().disconnectedAsync().thenRun(() -> events.add(new Disconnected(node)));
                yield 0;
            }
            case Failed f -> connectFailed(f.cause());
            case Disconnected d -> {
                disconnectsLeft--; // rdma4j answered with rdma_disconnect, as cma_handler does
                yield 0;
            }
        };
    }

    /**
     * A connection attempt failed: the error event's line, or the failed call's {@code perror}, or what the node's
     * set-up printed; then {@code connect_error}.
     */
    private int connectFailed(Throwable t) {
        connectsLeft--;
        return switch (t) {
            case CmException cm -> {
                out.printf("cmatose: event: RDMA_CM_EVENT_%s, error: %d%n", cm.event(), cm.status());
                yield cm.status();
            }
            case CmatoseNode.SetupException s -> {
                s.print(out);
                yield s.ret();
            }
            case VerbsException v -> {
                perror(switch (v.verb()) {
                    case "rdma_resolve_route" -> "cmatose: resolve route failed";
                    case "rdma_create_qp" -> "cmatose: unable to create QP";
                    case "rdma_connect" -> "cmatose: failure connecting";
                    case "rdma_accept" -> "cmatose: failure accepting";
                    default -> "cmatose: " + v.verb();
                }, v);
                yield -1;
            }
            case TimeoutException e -> {
                err.printf("cmatose: %s%n", e.getMessage());
                yield -ETIMEDOUT;
            }
            default -> {
                err.printf("cmatose: %s%n", t.getMessage());
                yield -1;
            }
        };
    }

    /** {@code poll_cqs}: every connected node's send or receive CQ, {@code -C} completions each. */
    private int pollCqs(boolean send) throws InterruptedException {
        try (WorkCompletions wcs = new WorkCompletions(8)) {
            for (CmatoseNode node : nodes) {
                if (!node.connected) {
                    continue;
                }
                int ret = node.pollCq(send, wcs, out);
                if (ret != 0) {
                    return ret;
                }
            }
        }
        return 0;
    }

    /**
     * {@code destroy_nodes}. An attempt still in progress is waited for, at most {@code wait} (rdma4j cannot cancel
     * it, where C destroys its id): its outcome comes from the CM, or from the connect's deadline.
     */
    private void destroyNodes(Duration wait) {
        for (CmatoseNode node : nodes) {
            node.destroy(wait, err);
        }
    }

    private void perror(String what, VerbsException e) {
        err.printf("%s: %s%n", what, e.errnoText());
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.join();
            return null;
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            return unwrap(e);
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
