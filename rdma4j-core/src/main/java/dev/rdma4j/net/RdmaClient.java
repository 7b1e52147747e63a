package dev.rdma4j.net;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.ConnectionSetup;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.internal.jfr.Flight;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;

/**
 * Connects to an {@link RdmaServer}: the client side of the short path.
 *
 * <pre>{@code
 * try (RdmaConnection c = RdmaClient.connect(new InetSocketAddress(host, 7471), RdmaOptions.defaults())) {
 *     c.send("ping".getBytes());
 *     try (Message reply = c.receive()) { ... }
 * }
 * }</pre>
 *
 * <p>Each connection owns what it made (its engine unless the options give one, in the options'
 * {@link RdmaOptions#pollingMode()}; its protection domain,
 * buffers and queue pair; with {@link RdmaOptions.Exchange#TCP} its device context) and frees it on close.
 * Thread-safe (stateless).
 */
public final class RdmaClient {
    private RdmaClient() {
    }

    /**
     * Connects and waits, at most the options' timeout: with rdma_cm {@code rdma_resolve_addr},
     * {@code rdma_resolve_route}, {@code rdma_create_qp}, the receives posted, {@code rdma_connect} with this
     * side's exposed region in the private data; with TCP a socket to {@code address}, the endpoints
     * exchanged, {@code ibv_modify_qp} to RTS, the receives posted and a barrier with the server.
     *
     * @param address the server's address (rdma_cm: its IP address on the RDMA device) and port
     * @param options buffers, exchange, timeout
     * @return the connection, established
     * @throws IOException          if connecting fails or times out (rdma_cm's {@code CmException} says why,
     *                              e.g. no listener on that port)
     * @throws InterruptedException if interrupted
     */
    public static RdmaConnection connect(InetSocketAddress address, RdmaOptions options)
            throws IOException, InterruptedException {
        CompletionEngine engine = options.engine();
        RdmaConnection c = new RdmaConnection(options, engine != null ? engine : newEngine(options),
                "to " + address, null);
        if (engine == null) {
            c.own(c.engine());
        }
        try {
            if (options.exchange() == RdmaOptions.Exchange.RDMA_CM) {
                connectCm(c, address, options);
            } else {
                connectTcp(c, address, options);
            }
            return c;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            closeAfter(c, e, "connecting");
            throw e;
        }
    }

    /**
     * Closes {@code c} after {@code failure}, keeping what the close throws as suppressed; a connection's failure to
     * connect or be accepted ({@code phase}: connecting, accepting) is a JFR event when a recording asks for it.
     */
    static void closeAfter(AutoCloseable c, Throwable failure, String phase) {
        if (Flight.on && c instanceof RdmaConnection r) {
            Flight.failed(r.toString(), String.valueOf(r.peerAddress()), phase, failure);
        }
        try {
            c.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * {@link #connect} on a virtual thread.
     *
     * @param address the server's address and port
     * @param options buffers, exchange, timeout
     * @return completes with the connection, or exceptionally as {@link #connect} throws
     */
    public static CompletableFuture<RdmaConnection> connectAsync(InetSocketAddress address, RdmaOptions options) {
        CompletableFuture<RdmaConnection> result = new CompletableFuture<>();
        Thread.ofVirtual().name("rdma4j-connect").start(() -> {
            try {
                RdmaConnection c = connect(address, options);
                if (!result.complete(c)) {
                    c.close(); // the caller cancelled: nobody will close it
                }
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** The engine of a server's or connection's own, in the options' {@link RdmaOptions#pollingMode()}. */
    static CompletionEngine newEngine(RdmaOptions options) throws VerbsException {
        return CompletionEngine.builder().mode(options.pollingMode()).name("rdma4j-net").build();
    }

    private static void connectCm(RdmaConnection c, InetSocketAddress address, RdmaOptions options)
            throws IOException, InterruptedException {
        CmEventChannel channel = c.own(CmEventChannel.create(c.engine()));
        ConnectionSetup setup = new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context context) throws VerbsException {
                ProtectionDomain pd = c.own(context.allocateProtectionDomain());
                return c.allocate(pd, null);
            }

            @Override
            public void beforeConnect(QueuePair queuePair) throws VerbsException {
                c.prepare(queuePair);
            }

            @Override
            public byte[] connectPrivateData(QueuePair queuePair) {
                return c.regionPrivateData();
            }

            @Override
            public int rnrRetryCount() {
                return c.rnrRetryCount(); // asked of the peer: it sends on credits
            }
        };
        // established() runs on the engine thread as ESTABLISHED is handled, before a disconnect that follows;
        // the wait is on that dependent future, which may be cancelled without touching the connect's own;
        // rdma_cm's deadline covers the whole connect, this wait only outlasts it
        Waits.await(CmConnection.connectAsync(channel, address, setup, new byte[0], options.timeout())
                .thenApply(c::established), options.timeout().plusSeconds(5), "connect",
                () -> new SocketTimeoutException("connecting to " + address + " took over " + options.timeout()));
    }

    private static void connectTcp(RdmaConnection c, InetSocketAddress address, RdmaOptions options)
            throws IOException {
        Context ctx = c.own(Device.byNameOrDefault(options.device()).open());
        ProtectionDomain pd = c.own(ctx.allocateProtectionDomain());
        QueuePair qp = c.own(c.allocate(pd, null).build());
        Socket s = new Socket();
        try {
            s.connect(address, (int) Math.min(Integer.MAX_VALUE, options.timeout().toMillis()));
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        c.handshake(s, qp);
    }
}
