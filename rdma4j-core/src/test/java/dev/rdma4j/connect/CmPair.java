package dev.rdma4j.connect;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.TestDevice;
import dev.rdma4j.VerbsException;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * An engine, an event channel and a listener on the device's IPv4 address, and connections made through
 * them (loopback rdma_cm), for device tests and their child JVMs. {@link #close()} closes what is left
 * in dependency order, tolerating what the test already closed.
 */
final class CmPair implements AutoCloseable {
    static final long T = 120;

    final CompletionEngine engine;
    final CmEventChannel channel;
    final CmListener listener;
    final InetSocketAddress address;
    /** PDs and CQs the setups allocated, newest first. */
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final List<CmConnection> connections = new ArrayList<>();

    CmPair() throws VerbsException {
        engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
        channel = CmEventChannel.create(engine);
        address = new InetSocketAddress(deviceAddress(), 20_000 + ThreadLocalRandom.current().nextInt(20_000));
        listener = CmListener.listen(channel, address, 8);
    }

    static InetAddress deviceAddress() throws VerbsException {
        try (Context ctx = TestDevice.device().open()) {
            return ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID on the device"));
        }
    }

    /** A setup that allocates a PD and one CQ per connection (closed by {@link #close()}). */
    ConnectionSetup setup() {
        return ctx -> {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = engine.createCompletionQueue(ctx, 16);
            synchronized (resources) {
                resources.add(0, pd);
                resources.add(0, cq);
            }
            return QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(8, 8);
        };
    }

    /** Connects and accepts: {@code [client, server]}, both established. */
    CmConnection[] connect() throws Exception {
        CompletableFuture<CmConnectionRequest> request = listener.nextRequestAsync();
        CompletableFuture<CmConnection> client = CmConnection.connectAsync(channel, address, setup(), new byte[0],
                Duration.ofSeconds(30));
        CmConnection server = request.get(T, TimeUnit.SECONDS).acceptAsync(setup(), new byte[0]).get(T, TimeUnit.SECONDS);
        CmConnection c = client.get(T, TimeUnit.SECONDS);
        synchronized (connections) {
            connections.add(c);
            connections.add(server);
        }
        return new CmConnection[] {c, server};
    }

    @Override
    public void close() {
        synchronized (connections) {
            for (CmConnection c : connections) {
                c.close();
            }
        }
        listener.close();
        synchronized (resources) {
            for (AutoCloseable r : resources) {
                try {
                    r.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + r, e);
                }
            }
        }
        channel.close();
        engine.close();
    }

    /** "ExceptionClass: message" of what {@code r} throws, or "ok". */
    static String outcome(ThrowingRunnable r) {
        try {
            r.run();
            return "ok";
        } catch (Exception | Error e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    /** A step that may throw. */
    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
