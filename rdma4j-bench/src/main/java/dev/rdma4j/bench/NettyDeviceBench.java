package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A Netty pipeline over rdma4j-netty's {@code RdmaChannel} against the same pipeline over Netty's epoll TCP
 * transport, on the RDMA device's IPv4 address ({@link NettyBench#address()}). Each side has an event loop group
 * of one thread: the server's (listener and accepted connection) and the client's.
 *
 * <ul>
 *   <li>{@code echo64}: round trips of a 64-byte message, client → echo server → client, driven on the client's
 *       event loop (the next write when the whole answer came), {@value #ROUND_TRIPS} per invocation; the score
 *       is the time of one round trip.</li>
 *   <li>{@code stream64k}: 64 KiB {@code writeAndFlush}es from the client to a discarding server, with Netty's
 *       back-pressure (writes while {@code isWritable()}, resumed by {@code channelWritabilityChanged}; default
 *       water marks), {@value #CHUNKS} per invocation (8 MiB), the invocation ending when the server has read them
 *       all; the score is writes per second: MiB/s = score / 16.</li>
 * </ul>
 * The client writes the same direct buffer every time ({@code retainedDuplicate()}): the RDMA transport copies it
 * into its registered send buffers, TCP's {@code write} into the socket.
 */
public class NettyDeviceBench {
    /** Echo round trips per invocation of {@code echo64}. */
    static final int ROUND_TRIPS = 64;
    /** 64 KiB writes per invocation of {@code stream64k}. */
    static final int CHUNKS = 128;
    static final int SMALL = 64;
    static final int CHUNK = 64 << 10;
    /** A remote stream's server acknowledges every so many bytes read, an invocation's worth (one byte each). */
    static final long ACK_BYTES = (long) CHUNKS * CHUNK;

    /** One server and one client connection over {@link #transport}, its two event loop groups. */
    public abstract static class Connection {
        /** The transport, the subclass's {@code @Param} (JMH takes parameters from the {@code @State} class). */
        abstract Transport transport();

        /**
         * The server to connect to when it runs elsewhere ({@link NettyTwoHost}); {@code null} (JMH): the state
         * makes its own server on {@link NettyBench#address()}.
         */
        InetSocketAddress remote;
        EventLoopGroup serverGroup;
        EventLoopGroup clientGroup;
        Channel server;
        Channel client;

        void open(Supplier<ChannelHandler> serverHandler, ChannelHandler clientHandler) throws Exception {
            Transport transport = transport();
            try {
                clientGroup = new MultiThreadIoEventLoopGroup(1, transport.ioHandler());
                InetSocketAddress address = remote;
                if (address == null) {
                    serverGroup = new MultiThreadIoEventLoopGroup(1, transport.ioHandler());
                    address = NettyBench.address();
                    server = listen(transport, serverGroup, address, serverHandler);
                }
                Bootstrap b = new Bootstrap().group(clientGroup).channel(transport.channel()).handler(clientHandler);
                if (transport == Transport.tcp) {
                    b.option(ChannelOption.TCP_NODELAY, true);
                }
                client = b.connect(address).sync().channel();
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            NettyBench.close(client);
            NettyBench.close(server);
            NettyBench.shutdown(clientGroup);
            NettyBench.shutdown(serverGroup);
            client = null;
            server = null;
            clientGroup = null;
            serverGroup = null;
            released();
        }

        /** Frees the state's own buffers, once its channels and groups are gone. */
        abstract void released();
    }

    /** {@code echo64}'s connection: an echo server, a client that plays ping-pong. */
    @State(Scope.Benchmark)
    public static class Echo extends Connection {
        @Param({"rdma", "tcp"})
        public Transport transport;

        @Override
        Transport transport() {
            return transport;
        }

        PingPong pingPong;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            pingPong = new PingPong();
            open(EchoHandler::new, pingPong);
            roundTrips(ROUND_TRIPS); // the connection's first messages outside the measurement
        }

        @Override
        void released() {
            if (pingPong != null) {
                pingPong.payload.release();
                pingPong = null;
            }
        }

        void roundTrips(int n) throws Exception {
            CompletableFuture<Void> done = new CompletableFuture<>();
            client.eventLoop().execute(() -> pingPong.start(n, done));
            done.get(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** {@code stream64k}'s connection: a discarding server, a client that writes with back-pressure. */
    @State(Scope.Benchmark)
    public static class Stream extends Connection {
        @Param({"rdma", "tcp"})
        public Transport transport;

        @Override
        Transport transport() {
            return transport;
        }

        Discard discard;
        Pump pump;
        long target;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            discard = new Discard();
            pump = new Pump();
            if (remote == null) {
                open(() -> discard, pump);
            } else { // the remote server answers a byte per ACK_BYTES read (NettyTwoHost.Acknowledge): counted here
                open(null, new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(pump, discard);
                    }
                });
            }
            stream(CHUNKS); // the connection's first messages outside the measurement
        }

        @Override
        void released() {
            if (pump != null) {
                pump.chunk.release();
                pump = null;
            }
        }

        void stream(int chunks) throws Exception {
            target += (long) chunks * CHUNK;
            CompletableFuture<Void> done = new CompletableFuture<>();
            // before the first byte of this invocation can arrive
            discard.goal = new Goal(remote == null ? target : target / ACK_BYTES, done);
            client.eventLoop().execute(() -> pump.start(chunks, done));
            done.get(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /**
     * A listener on {@code address} over {@code transport} whose accepted connections, on {@code group}, each get a
     * handler from {@code handler} (TCP_NODELAY on TCP's).
     */
    static Channel listen(Transport transport, EventLoopGroup group, InetSocketAddress address,
            Supplier<ChannelHandler> handler) throws InterruptedException {
        ServerBootstrap sb = new ServerBootstrap().group(group).channel(transport.serverChannel())
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(handler.get());
                    }
                });
        if (transport == Transport.tcp) {
            sb.childOption(ChannelOption.TCP_NODELAY, true);
        }
        return sb.bind(address).sync().channel();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @OperationsPerInvocation(ROUND_TRIPS)
    public void echo64(Echo s) throws Exception {
        s.roundTrips(ROUND_TRIPS);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(CHUNKS)
    public void stream64k(Stream s) throws Exception {
        s.stream(CHUNKS);
    }

    // ---------------------------------------------------------------- handlers

    /** Writes back what it reads, flushed at the end of each read burst. */
    static final class EchoHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    /** The client of {@code echo64}: writes 64 bytes, waits for all 64 to come back, again, {@code n} times. */
    @ChannelHandler.Sharable
    static final class PingPong extends ChannelInboundHandlerAdapter {
        final ByteBuf payload;
        private ChannelHandlerContext ctx;
        private int remaining;
        private int received;
        private CompletableFuture<Void> done;

        PingPong() {
            byte[] bytes = new byte[SMALL];
            new Random(1).nextBytes(bytes);
            payload = Unpooled.directBuffer(SMALL).writeBytes(bytes);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        /** On the client's event loop. */
        void start(int n, CompletableFuture<Void> done) {
            this.done = done;
            remaining = n;
            received = 0;
            send();
        }

        private void send() {
            ctx.writeAndFlush(payload.retainedDuplicate(), ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            received += b.readableBytes();
            b.release();
            if (received >= SMALL) {
                if (received != SMALL) {
                    done.completeExceptionally(new IllegalStateException("got " + received + " bytes back, not 64"));
                    return;
                }
                received = 0;
                if (--remaining == 0) {
                    done.complete(null);
                } else {
                    send();
                }
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (done != null) {
                done.completeExceptionally(cause);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (done != null) {
                done.completeExceptionally(new IOException("the echo connection closed"));
            }
        }
    }

    /** The bytes {@code stream64k}'s invocation waits for, and its completion. */
    record Goal(long bytes, CompletableFuture<Void> done) {
    }

    /**
     * The server of {@code stream64k}: counts and releases what it reads (and a remote stream's client: counts the
     * server's acknowledgements).
     */
    @ChannelHandler.Sharable
    static final class Discard extends ChannelInboundHandlerAdapter {
        volatile Goal goal;
        private long received; // its channel's event loop only

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            received += b.readableBytes();
            b.release();
            Goal g = goal;
            if (g != null && received >= g.bytes()) {
                g.done().complete(null);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Goal g = goal;
            if (g != null) {
                g.done().completeExceptionally(cause);
            }
        }
    }

    /** The client of {@code stream64k}: writes while the channel is writable, resumes when it becomes so again. */
    @ChannelHandler.Sharable
    static final class Pump extends ChannelInboundHandlerAdapter {
        final ByteBuf chunk;
        private ChannelHandlerContext ctx;
        private int remaining;
        private boolean pumping;
        private CompletableFuture<Void> done;

        Pump() {
            byte[] bytes = new byte[CHUNK];
            new Random(2).nextBytes(bytes);
            chunk = Unpooled.directBuffer(CHUNK).writeBytes(bytes);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        /** On the client's event loop. */
        void start(int chunks, CompletableFuture<Void> done) {
            this.done = done;
            remaining += chunks;
            pump();
        }

        private void pump() {
            if (pumping) {
                return; // a writability change fired inside our own write
            }
            pumping = true;
            try {
                Channel ch = ctx.channel();
                while (remaining > 0 && ch.isWritable()) {
                    remaining--;
                    ctx.writeAndFlush(chunk.retainedDuplicate(), ctx.voidPromise());
                }
            } finally {
                pumping = false;
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (done != null) {
                done.completeExceptionally(cause);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (done != null) {
                done.completeExceptionally(new IOException("the stream's connection closed"));
            }
        }
    }
}
