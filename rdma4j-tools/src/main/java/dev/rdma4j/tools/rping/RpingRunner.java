package dev.rdma4j.tools.rping;

import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmEventType;
import dev.rdma4j.connect.CmException;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;

/**
 * rping's {@code main} after option parsing: the rdma_cm side ({@code rping_run_server},
 * {@code rping_run_persistent_server}, {@code rping_run_client}) with the C tool's messages and exit
 * statuses (the C {@code main} returns -1 for most failures: status 255).
 */
final class RpingRunner {
    /** {@code rdma_resolve_addr} and {@code rdma_resolve_route} time-outs of the C tool, 2000 ms each. */
    static final Duration RESOLVE_TIMEOUT = Duration.ofMillis(2000);
    /**
     * The whole connect: the C tool has no deadline of its own and waits for the CM's answer (an unanswered
     * request ends in UNREACHABLE after the CM's retries, over a minute); this only bounds a CM that never
     * answers.
     */
    static final Duration CONNECT_TIMEOUT = Duration.ofMinutes(5);
    /** The C tool's {@code rdma_listen} backlog. */
    static final int BACKLOG = 3;
    private static final byte[] NO_PRIVATE_DATA = new byte[0];
    private static final int ENODEV = 19;

    private final RpingOptions options;
    private final PrintWriter out;
    private final PrintWriter err;

    /**
     * A runner.
     *
     * @param options the settings
     * @param out     stdout
     * @param err     stderr
     */
    RpingRunner(RpingOptions options, PrintWriter out, PrintWriter err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the server or the client.
     *
     * @return the C tool's {@code main} return value (0 on success, -1 on most failures, an errno when
     *         the rdma_cm event channel cannot be created)
     * @throws VerbsException       if the engine cannot be created
     * @throws InterruptedException if interrupted
     */
    int run() throws VerbsException, InterruptedException {
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).name("rping-engine")
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
                return e.errno();
            }
            try (channel) {
                return options.server() ? runServer(engine, channel) : runClient(engine, channel);
            }
        }
    }

    private int runServer(CompletionEngine engine, CmEventChannel channel) throws InterruptedException {
        CmListener listener;
        try {
            listener = CmListener.listen(channel, new InetSocketAddress(options.address(), options.port()), BACKLOG);
        } catch (VerbsException e) {
            perror(e);
            return -1;
        }
        try (listener) {
            debug("rdma_bind_addr successful");
            debug("rdma_listen");
            return options.persistent() ? runPersistentServer(engine, listener) : runOneServer(engine, listener);
        }
    }

    private int runOneServer(CompletionEngine engine, CmListener listener) throws InterruptedException {
        CmConnectionRequest request;
        try {
            request = listener.nextRequestAsync().get();
        } catch (ExecutionException e) {
            err.printf("wait for CONNECT_REQUEST state %d%n", RpingState.ERROR.code());
            return -1;
        }
        try (RpingSession session = new RpingSession(options, engine, out, err)) {
            return serve(session, request);
        }
    }

    /** {@code -P}: each connection on its own thread, for ever (as the C tool, until killed). */
    private int runPersistentServer(CompletionEngine engine, CmListener listener) throws InterruptedException {
        for (;;) {
            CmConnectionRequest request;
            try {
                request = listener.nextRequestAsync().get();
            } catch (ExecutionException e) {
                err.printf("wait for CONNECT_REQUEST state %d%n", RpingState.ERROR.code());
                return -1;
            }
            Thread.ofVirtual().name("rping-server").start(() -> {
                try (RpingSession session = new RpingSession(options, engine, out, err)) {
                    serve(session, request);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    err.printf("rping: %s%n", e.getMessage());
                }
            });
        }
    }

    private int serve(RpingSession session, CmConnectionRequest request)
            throws InterruptedException {
        debug("accepting client connection request");
        CmConnection connection;
        try {
            connection = request.acceptAsync(session.setup(), NO_PRIVATE_DATA).get();
        } catch (ExecutionException e) {
            connectionFailed(e.getCause(), "rdma_accept");
            err.printf("connect error %d%n", -1);
            return -1;
        }
        if (!session.attach(connection)) {
            session.disconnect();
            return -1;
        }
        int ret = session.runServer();
        if (ret != 0) {
            err.printf("rping server failed: %d%n", ret);
        }
        session.disconnect();
        return ret;
    }

    private int runClient(CompletionEngine engine, CmEventChannel channel) throws InterruptedException {
        InetSocketAddress server = new InetSocketAddress(options.address(), options.port());
        try (RpingSession session = new RpingSession(options, engine, out, err)) {
            CmConnection connection;
            try {
                InetSocketAddress source = options.source() == null ? null : new InetSocketAddress(options.source(), 0);
                connection = CmConnection.connectAsync(channel, source, server, session.setup(), NO_PRIVATE_DATA,
                        RESOLVE_TIMEOUT, CONNECT_TIMEOUT).get();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                connectionFailed(cause, "rdma_connect");
                if (cause instanceof CmException cm && (cm.event() == CmEventType.ADDR_ERROR
                        || cm.event() == CmEventType.ROUTE_ERROR)) {
                    RpingState reached = cm.event() == CmEventType.ADDR_ERROR ? RpingState.IDLE
                            : RpingState.ADDR_RESOLVED;
                    err.printf("waiting for addr/route resolution state %d%n", reached.code());
                } else {
                    err.printf("wait for CONNECTED state %d%n", RpingState.ROUTE_RESOLVED.code());
                    err.printf("connect error %d%n", -1);
                }
                return -1;
            }
            debug("rdma_connect successful");
            if (!session.attach(connection)) {
                session.disconnect();
                return -1;
            }
            int ret = session.runClient();
            if (ret != 0) {
                err.printf("rping client failed: %d%n", ret);
            }
            session.disconnect();
            return ret;
        }
    }

    /** The C tool's line for a failed connection set-up: the rdma_cm event, or the verb's perror. */
    private void connectionFailed(Throwable cause, String verb) {
        if (cause instanceof CmException cm) {
            err.printf("cma event RDMA_CM_EVENT_%s, error %d%n", cm.event(), cm.status());
        } else if (cause instanceof VerbsException v) {
            perror(v);
        } else {
            err.printf("%s: %s%n", verb, cause.getMessage());
        }
    }

    private void perror(VerbsException e) {
        err.printf("%s: %s%n", e.verb(), e.errnoText());
    }

    private void debug(String format, Object... args) {
        if (options.debug()) {
            out.printf(format + "%n", args);
        }
    }
}
