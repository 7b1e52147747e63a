package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.Context;
import dev.rdma4j.TestDevice;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The short path's behaviour on the device, over rdma_cm and over TCP: what a user relies on and the
 * examples do not show (ordering, the end of a connection, deadlines, closing under a waiting thread).
 */
@Tag("device")
class RdmaConnectionDeviceTest {
    private static final long T = 120;

    private static RdmaOptions.Builder options(RdmaOptions.Exchange exchange) {
        return RdmaOptions.builder().exchange(exchange).timeout(Duration.ofSeconds(60));
    }

    static InetSocketAddress address() throws Exception {
        InetAddress ip;
        try (Context ctx = TestDevice.device().open()) {
            ip = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID"));
        }
        return new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    /** Waits (with a deadline) until {@code n} accepts are in progress on {@code server}. */
    private static void awaitAccepts(RdmaServer server, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
        while (server.acceptsInProgress() != n) {
            assertThat(System.nanoTime()).as("accepts in progress: %d, waiting for %d", server.acceptsInProgress(), n)
                    .isLessThan(deadline);
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * {@code n} round trips of one byte with the README's idiom: {@code s} echoes on another thread ({@code receive},
     * then {@code send}), {@code c} sends each and waits for its echo.
     */
    private static void pingPong(RdmaConnection c, RdmaConnection s, int n) throws Exception {
        CompletableFuture<Integer> echoed = CompletableFuture.supplyAsync(() -> {
            int i = 0;
            try {
                for (; i < n; i++) {
                    try (Message m = s.receive()) {
                        s.send(m.data());
                    }
                }
                return i;
            } catch (IOException | InterruptedException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        for (int i = 0; i < n; i++) {
            c.send(new byte[] {(byte) i});
            try (Message m = c.receive()) {
                assertThat(m.bytes()).containsExactly((byte) i);
            }
        }
        assertThat(echoed.get(T, TimeUnit.SECONDS)).isEqualTo(n);
    }

    /**
     * Whether {@code t} waits: parked (for the inbox), or asleep in {@code poll(2)} on its connection's completion
     * channel (a blocking receive in event mode).
     */
    private static boolean waiting(Thread t) {
        Thread.State state = t.getState();
        if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
            return true;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals("pollReadable")) {
                return true;
            }
        }
        return false;
    }

    /** A server and one connection to it: {@code [client, server side]}, closed by the test. */
    private static RdmaConnection[] pair(RdmaServer server, RdmaOptions client) throws Exception {
        CompletableFuture<RdmaConnection> accepted = server.acceptAsync();
        RdmaConnection c = RdmaClient.connect(server.localAddress(), client);
        return new RdmaConnection[] {c, accepted.get(T, TimeUnit.SECONDS)};
    }

    /**
     * Port 0: the system chooses, and {@code localAddress()} says which, over rdma_cm too (it said port 0 there, so
     * a client had nothing to connect to; a fixed port may meet a client's ephemeral one, EADDRINUSE).
     */
    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void aServerOnPortZeroReportsThePortChosenAndServesOnIt(RdmaOptions.Exchange exchange) throws Exception {
        RdmaOptions o = options(exchange).build();
        InetSocketAddress any = new InetSocketAddress(address().getAddress(), 0);
        try (RdmaServer server = RdmaServer.listen(any, o); RdmaServer other = RdmaServer.listen(any, o)) {
            assertThat(server.localAddress().getAddress()).isEqualTo(any.getAddress());
            assertThat(server.localAddress().getPort()).isPositive().isNotEqualTo(other.localAddress().getPort());
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection c = p[0]; RdmaConnection s = p[1]) {
                c.send("port zero".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                try (Message m = s.receive(Duration.ofSeconds(T))) {
                    assertThat(new String(m.bytes(), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("port zero");
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void everyMessageSentBeforeThePeerClosedIsReceivedInOrderThenEof(RdmaOptions.Exchange exchange) throws Exception {
        // two send buffers for 100 messages: 98 wait, copied, in call order
        RdmaOptions o = options(exchange).sendBuffers(2).receiveBuffers(128).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            List<CompletableFuture<Void>> sends = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                sends.add(p[0].sendAsync(new byte[] {(byte) i, (byte) (i >> 8)}));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
            p[0].close();
            try (RdmaConnection s = p[1]) {
                for (int i = 0; i < 100; i++) {
                    try (Message m = s.receive()) {
                        assertThat(m.length()).isEqualTo(2);
                        assertThat((m.data().get(ValueLayout.JAVA_BYTE, 0) & 0xff)
                                | (m.data().get(ValueLayout.JAVA_BYTE, 1) & 0xff) << 8).as("message %d", i)
                                .isEqualTo(i);
                    }
                }
                assertThatThrownBy(s::receive).isInstanceOf(EOFException.class)
                        .hasMessageContaining("the peer closed the connection");
                assertThatThrownBy(s::receive).as("and again").isInstanceOf(EOFException.class);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void aReceiveThatTimesOutLosesNoMessage(RdmaOptions.Exchange exchange) throws Exception {
        RdmaOptions o = options(exchange).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection c = p[0]; RdmaConnection s = p[1]) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> s.receive(Duration.ofMillis(300)))
                        .isInstanceOf(SocketTimeoutException.class)
                        .hasMessageContaining("no message arrived on the connection from ")
                        .hasMessageContaining(" within PT0.3S");
                assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(T));
                CompletableFuture<Message> given = s.receiveAsync();
                assertThat(given.cancel(false)).isTrue(); // a cancelled wait must not swallow the next message
                c.send("after the timeout".getBytes());
                try (Message m = s.receive()) {
                    assertThat(new String(m.bytes())).isEqualTo("after the timeout");
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void closingWhileAnotherThreadReceivesFailsThatReceiveAndLaterCalls(RdmaOptions.Exchange exchange)
            throws Exception {
        RdmaOptions o = options(exchange).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection c = p[0]) {
                RdmaConnection s = p[1];
                CompletableFuture<Throwable> outcome = new CompletableFuture<>();
                Thread t = Thread.ofVirtual().start(() -> {
                    try {
                        s.receive(Duration.ofSeconds(T)).close();
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(e);
                    }
                });
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
                while (!waiting(t)) {
                    assertThat(System.nanoTime()).as("the receiver waits").isLessThan(deadline);
                    Thread.yield();
                }
                s.close();
                assertThat(outcome.get(T, TimeUnit.SECONDS)).isInstanceOf(AsynchronousCloseException.class);
                assertThatThrownBy(s::receive).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
                assertThatThrownBy(() -> s.send(new byte[1])).isInstanceOf(IllegalStateException.class);
                s.close(); // idempotent
                assertThatThrownBy(() -> c.receive(Duration.ofSeconds(T))).as("the client sees the end")
                        .isInstanceOf(EOFException.class);
            }
        }
    }

    @Test
    void anAcceptThatTimedOutDoesNotSwallowTheNextClient() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            assertThatThrownBy(() -> server.accept(Duration.ofMillis(200)))
                    .isInstanceOf(SocketTimeoutException.class).hasMessageContaining("no client connected");
            CompletableFuture<RdmaConnection> client = RdmaClient.connectAsync(server.localAddress(), o);
            try (RdmaConnection s = server.accept(Duration.ofSeconds(T));
                 RdmaConnection c = client.get(T, TimeUnit.SECONDS)) {
                c.send(new byte[] {42});
                try (Message m = s.receive()) {
                    assertThat(m.bytes()).containsExactly(42);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void closingTheServerClosesItsConnectionsAndFailsAWaitingAccept(RdmaOptions.Exchange exchange)
            throws Exception {
        RdmaOptions o = options(exchange).build();
        RdmaServer server = RdmaServer.listen(address(), o);
        RdmaConnection[] p = pair(server, o);
        try (RdmaConnection c = p[0]) {
            CompletableFuture<RdmaConnection> waiting = server.acceptAsync();
            awaitAccepts(server, 1);
            server.close();
            assertThat(p[1].isClosed()).isTrue();
            assertThatThrownBy(() -> waiting.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(AsynchronousCloseException.class);
            assertThatThrownBy(() -> c.receive(Duration.ofSeconds(T))).isInstanceOf(EOFException.class);
            assertThatThrownBy(server::accept).isInstanceOf(IllegalStateException.class);
            server.close(); // idempotent
        }
    }

    @Test
    void misuseIsRefusedClearly() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).messageSize(64).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection c = p[0]; RdmaConnection s = p[1]) {
                assertThatThrownBy(() -> c.send(new byte[65])).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("does not fit the 64-byte buffers");
                assertThatThrownBy(c::region).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("exposes no region");
                assertThatThrownBy(c::peerRegion).isInstanceOf(IllegalStateException.class);
                // a continuation on the engine thread may not block there
                CompletableFuture<Throwable> onEngine = new CompletableFuture<>();
                s.receiveAsync().whenComplete((m, e) -> {
                    try {
                        s.receive(Duration.ofSeconds(1));
                        onEngine.complete(null);
                    } catch (Throwable x) {
                        onEngine.complete(x);
                    } finally {
                        m.close();
                    }
                });
                c.send(new byte[] {1});
                assertThat(onEngine.get(T, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("completion engine");
                Message m = null;
                c.send(new byte[] {2});
                m = s.receive();
                m.close();
                Message closed = m;
                assertThatThrownBy(closed::data).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("was closed");
                closed.close(); // idempotent: the buffer is not posted twice
                c.send(new byte[] {3});
                try (Message third = s.receive()) {
                    assertThat(third.bytes()).containsExactly(3);
                }
            }
        }
    }

    @Test
    void aConnectToAPortWithNoListenerFailsWithTheReason() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).build();
        long start = System.nanoTime();
        assertThatThrownBy(() -> RdmaClient.connect(address(), o)).isInstanceOf(IOException.class)
                .hasMessageContaining("no listener on that port");
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(T));
    }

    @Test
    void writeAndReadBetweenTheExposedRegionsOverTcp() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.TCP).exposeRegion(8192).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection c = p[0]; RdmaConnection s = p[1]) {
                assertThat(c.peerRegion().rkey()).isEqualTo(s.region().rkey());
                c.region().segment().set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
                c.write(0, 4096, 8);
                assertThat(s.region().segment().get(ValueLayout.JAVA_LONG, 4096)).isEqualTo(0x1122334455667788L);
                s.region().segment().set(ValueLayout.JAVA_LONG, 16, 77L);
                c.readAsync(100, 16, 8).get(T, TimeUnit.SECONDS);
                assertThat(c.region().segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 100)).isEqualTo(77L);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void aCancelledAcceptAsyncDoesNotSwallowTheNextClient(RdmaOptions.Exchange exchange) throws Exception {
        RdmaOptions o = options(exchange).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            CompletableFuture<RdmaConnection> given = server.acceptAsync();
            awaitAccepts(server, 1);
            assertThat(given.cancel(false)).isTrue();
            awaitAccepts(server, 0); // the cancelled accept's thread noticed and left
            CompletableFuture<RdmaConnection> client = RdmaClient.connectAsync(server.localAddress(), o);
            try (RdmaConnection s = server.accept(Duration.ofSeconds(T));
                 RdmaConnection c = client.get(T, TimeUnit.SECONDS)) {
                c.send(new byte[] {7});
                try (Message m = s.receive()) {
                    assertThat(m.bytes()).containsExactly(7);
                }
            }
        }
    }

    @Test
    void sendsWaitingForABufferFailAtCloseWithoutOverflowingTheStack() throws Exception {
        // one send buffer, one receive buffer that the server never gives back: the second send waits in the send
        // buffer for a credit, and 4998 wait for the buffer
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).sendBuffers(1).receiveBuffers(1).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection s = p[1]) {
                RdmaConnection c = p[0];
                List<CompletableFuture<Void>> sends = new ArrayList<>();
                for (int i = 0; i < 5000; i++) {
                    sends.add(c.sendAsync(new byte[] {(byte) i}));
                }
                sends.get(0).get(T, TimeUnit.SECONDS);
                assertThat(sends.get(4999)).isNotDone();
                c.close();
                CompletableFuture.allOf(sends.subList(1, 5000).stream()
                        .map(f -> f.handle((v, e) -> e)).toArray(CompletableFuture[]::new)).get(T, TimeUnit.SECONDS);
                assertThat(sends.get(4999)).isCompletedExceptionally();
                assertThatThrownBy(() -> sends.get(4999).get()).cause().isInstanceOf(AsynchronousCloseException.class);
                try (Message m = s.receive()) {
                    assertThat(m.bytes()).containsExactly(0);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void thePeersCloseEndsReceivingEvenWhileTheApplicationHoldsEveryBuffer(RdmaOptions.Exchange exchange)
            throws Exception {
        RdmaOptions o = options(exchange).receiveBuffers(2).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection s = p[1]) {
                p[0].send(new byte[] {1});
                p[0].send(new byte[] {2});
                Message first = s.receive();
                Message second = s.receive(); // both buffers held: no receive is posted to flush
                p[0].close();
                assertThatThrownBy(() -> s.receive(Duration.ofSeconds(T))).isInstanceOf(EOFException.class);
                assertThat(first.bytes()).containsExactly(1);
                assertThat(second.bytes()).containsExactly(2);
                first.close();
                second.close();
            }
        }
    }

    @Test
    void aSharedReceiveQueueGetsBackTheBuffersOfAConnectionThatClosed() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).sharedReceiveQueue(true).receiveBuffers(8).build();
        RdmaOptions client = options(RdmaOptions.Exchange.RDMA_CM).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] a = pair(server, client);
            try (RdmaConnection c = a[0]) {
                for (int i = 0; i < 8; i++) {
                    c.send(new byte[] {(byte) i}); // all eight buffers now hold a message nobody took
                }
                a[1].close(); // they go back to the pool
            }
            RdmaConnection[] b = pair(server, client);
            try (RdmaConnection c = b[0]; RdmaConnection s = b[1]) {
                List<Message> held = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    c.send(new byte[] {(byte) (10 + i)});
                    held.add(s.receive()); // needs all eight buffers, none given back in between
                }
                for (int i = 0; i < 8; i++) {
                    assertThat(held.get(i).bytes()).containsExactly(10 + i);
                    held.get(i).close();
                }
            }
        }
    }
    /**
     * A blocking send returns once its message is in a send buffer, as a socket's write returns once the bytes are
     * buffered: the server holds its only receive buffer, so the second message waits there for a credit until the
     * server gives it back, and send returned long before that; close() then waits for the third (the socket's
     * linger), which arrives.
     */
    @Test
    void aBlockingSendReturnsOncePostedAndCloseWaitsForWhatItReturnedFor() throws Exception {
        RdmaOptions o = options(RdmaOptions.Exchange.RDMA_CM).receiveBuffers(1).timeout(Duration.ofSeconds(T)).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            try (RdmaConnection s = p[1]) {
                RdmaConnection c = p[0];
                c.send(new byte[] {1});
                Message first = s.receive();
                c.send(new byte[] {2}); // waiting for a credit: the server holds its one buffer
                CompletableFuture<Void> third = CompletableFuture.runAsync(() -> {
                    try {
                        c.send(new byte[] {3});
                        c.close(); // lingers until 2 and 3 are acknowledged
                    } catch (IOException | InterruptedException e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
                // the close has begun; it cannot end before the server takes 2 and 3 (one buffer, held by the test)
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(T);
                while (!c.isClosed()) {
                    assertThat(System.nanoTime()).as("close() began").isLessThan(deadline);
                    assertThat(third).as("send 3 and close() do not fail").isNotDone();
                    Thread.onSpinWait();
                    Thread.yield();
                }
                assertThat(third).as("close() waits for the sends it returned for").isNotDone();
                first.close();
                try (Message m = s.receive()) {
                    assertThat(m.bytes()).containsExactly(2);
                }
                try (Message m = s.receive()) {
                    assertThat(m.bytes()).containsExactly(3);
                }
                third.get(T, TimeUnit.SECONDS);
                assertThatThrownBy(() -> s.receive(Duration.ofSeconds(T))).isInstanceOf(EOFException.class);
            }
        }
    }

    /**
     * A send that fails after send() returned fails the connection: the next send says so with the cause (a message
     * longer than the peer's buffers: the peer's receive fails, this side's send completes with an error status).
     */
    @Test
    void aSendThatFailsAfterSendReturnedFailsTheNextCall() throws Exception {
        RdmaOptions small = options(RdmaOptions.Exchange.RDMA_CM).messageSize(16).build();
        RdmaOptions large = options(RdmaOptions.Exchange.RDMA_CM).messageSize(64).build();
        try (RdmaServer server = RdmaServer.listen(address(), small)) {
            RdmaConnection[] p = pair(server, large);
            try (RdmaConnection c = p[0]; RdmaConnection s = p[1]) {
                c.send(new byte[64]); // returns once posted: the failure comes after
                assertThatThrownBy(() -> c.receive(Duration.ofSeconds(T))).isInstanceOf(IOException.class)
                        .hasRootCauseInstanceOf(dev.rdma4j.engine.WorkRequestException.class);
                assertThatThrownBy(() -> c.send(new byte[1])).isInstanceOf(IOException.class)
                        .hasMessageContaining("failed").cause()
                        .isInstanceOf(dev.rdma4j.engine.WorkRequestException.class);
                assertThatThrownBy(() -> s.receive(Duration.ofSeconds(T))).isInstanceOf(IOException.class);
            }
        }
    }
    /**
     * busyPoll: the waiting threads poll their queues themselves (the engines count what they dispatched), round
     * trips work, and a stream sent with blocking sends right before the close arrives whole and in order, then
     * end of stream, while the receiver waits polling (the disconnect's drain and the waiter share the queue).
     */
    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void busyPolledConnectionsLetTheWaitingThreadPoll(RdmaOptions.Exchange exchange) throws Exception {
        RdmaOptions o = options(exchange).busyPoll(true).sendBuffers(4).receiveBuffers(128).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            RdmaConnection c = p[0];
            try (RdmaConnection s = p[1]) {
                pingPong(c, s, 200);
                assertThat(c.engine().completionsByWaiters()).as("client completions taken by its waiting thread")
                        .isPositive();
                assertThat(s.engine().completionsByWaiters()).as("server's").isPositive();

                for (int i = 0; i < 100; i++) {
                    c.send(new byte[] {(byte) i, (byte) (i >> 8)}); // 4 buffers: most wait for one
                }
                c.close();
                for (int i = 0; i < 100; i++) {
                    try (Message m = s.receive()) {
                        assertThat((m.data().get(ValueLayout.JAVA_BYTE, 0) & 0xff)
                                | (m.data().get(ValueLayout.JAVA_BYTE, 1) & 0xff) << 8).as("message %d", i)
                                .isEqualTo(i);
                    }
                }
                assertThatThrownBy(() -> s.receive(Duration.ofSeconds(T))).isInstanceOf(EOFException.class);
            }
        }
    }
    /**
     * Event mode (the default): a blocking receive sleeps on its connection's own completion channel and takes the
     * completions itself (the engine's thread hands none over), so a ping-pong's completions are mostly dispatched
     * by the waiting threads; then two threads receiving on one connection share a stream, each message exactly
     * once, and both see its end (one waits on the channel, the other for the inbox, and takes over).
     */
    @ParameterizedTest
    @EnumSource(RdmaOptions.Exchange.class)
    void blockingReceiversTakeTheCompletionsThemselvesInEventMode(RdmaOptions.Exchange exchange) throws Exception {
        RdmaOptions o = options(exchange).sendBuffers(4).receiveBuffers(64).build();
        try (RdmaServer server = RdmaServer.listen(address(), o)) {
            RdmaConnection[] p = pair(server, o);
            RdmaConnection c = p[0];
            try (RdmaConnection s = p[1]) {
                long before = c.engine().completionsByWaiters();
                long wakeUps = c.engine().waiterWakeUps();
                pingPong(c, s, 200);
                assertThat(c.engine().completionsByWaiters() - before)
                        .as("of the client's 400 completions, those its receiving thread dispatched")
                        .isGreaterThanOrEqualTo(200);
                System.out.println("wake-ups of the client's receiver in 200 round trips: "
                        + (c.engine().waiterWakeUps() - wakeUps) + ", completions it dispatched: "
                        + (c.engine().completionsByWaiters() - before));
                // messages are sent solicited and a receiver sleeps for solicited completions only: its own sends'
                // completions (polled with the next message) do not wake it, one wake-up a message
                assertThat(c.engine().waiterWakeUps() - wakeUps).as("the client receiver's wake-ups in 200 round trips")
                        .isPositive().isLessThanOrEqualTo(250);

                java.util.Set<Integer> got = java.util.concurrent.ConcurrentHashMap.newKeySet();
                java.util.concurrent.atomic.AtomicInteger twice = new java.util.concurrent.atomic.AtomicInteger();
                List<CompletableFuture<Integer>> receivers = new ArrayList<>();
                java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newThreadPerTaskExecutor(
                        Thread.ofPlatform().name("receiver-", 0).factory());
                for (int r = 0; r < 2; r++) {
                    receivers.add(CompletableFuture.supplyAsync(() -> {
                        int n = 0;
                        for (;;) {
                            try (Message m = s.receive()) {
                                if (!got.add(m.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0))) {
                                    twice.incrementAndGet();
                                }
                                n++;
                            } catch (EOFException end) {
                                return n;
                            } catch (IOException | InterruptedException e) {
                                throw new java.util.concurrent.CompletionException(e);
                            }
                        }
                    }, threads));
                }
                for (int i = 0; i < 300; i++) {
                    c.send(java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.nativeOrder()).putInt(i).array());
                }
                c.close();
                int total = 0;
                for (CompletableFuture<Integer> r : receivers) {
                    total += r.get(T, TimeUnit.SECONDS);
                }
                threads.close();
                assertThat(twice.get()).isZero();
                assertThat(total).isEqualTo(300);
                assertThat(got).hasSize(300).allMatch(v -> v >= 0 && v < 300);
            }
        }
    }
}
