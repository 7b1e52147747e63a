package dev.rdma4j.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Netty's own patterns over {@link RdmaChannel} on the device (rxe0 in the guest): echo, discard with a checksum,
 * half-close, the peer's close, and HTTP/1.1 with Netty's codecs; Netty's leak detector at PARANOID counts no leak.
 */
@Tag("device")
class RdmaChannelDeviceTest {
    private static final long T = 120;
    private static EventLoopGroup group;

    static {
        NettyTestSupport.init();
    }

    @BeforeAll
    static void start() {
        group = new MultiThreadIoEventLoopGroup(2, RdmaIoHandler.newFactory());
    }

    @AfterAll
    static void stop() throws Exception {
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        assertThat(NettyTestSupport.leaksAfterGc()).as("leaks Netty's detector reported").isZero();
    }

    private static Channel server(InetSocketAddress address, ChannelInitializer<Channel> child, Object... options)
            throws Exception {
        return server(group, address, child, options);
    }

    private static Channel server(EventLoopGroup group, InetSocketAddress address, ChannelInitializer<Channel> child,
            Object... options) throws Exception {
        ServerBootstrap b = new ServerBootstrap().group(group).channel(RdmaServerChannel.class).childHandler(child);
        for (int i = 0; i < options.length; i += 2) {
            childOption(b, options[i], options[i + 1]);
        }
        return b.bind(address).sync().channel();
    }

    @SuppressWarnings("unchecked")
    private static <T> void childOption(ServerBootstrap b, Object option, Object value) {
        b.childOption((ChannelOption<T>) option, (T) value);
    }

    @SuppressWarnings("unchecked")
    private static <T> void option(Bootstrap b, Object option, Object value) {
        b.option((ChannelOption<T>) option, (T) value);
    }

    private static Channel client(InetSocketAddress address, ChannelInboundHandlerAdapter handler, Object... options)
            throws Exception {
        return client(group, address, handler, options);
    }

    private static Channel client(EventLoopGroup group, InetSocketAddress address, ChannelInboundHandlerAdapter handler,
            Object... options) throws Exception {
        Bootstrap b = new Bootstrap().group(group).channel(RdmaChannel.class).handler(handler);
        for (int i = 0; i < options.length; i += 2) {
            option(b, options[i], options[i + 1]);
        }
        return b.connect(address).sync().channel();
    }

    /** Writes back what it reads. */
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    /** Collects what it reads until {@code expected} bytes came. */
    private static final class Collect extends ChannelInboundHandlerAdapter {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
        final int expected;

        Collect(int expected) {
            this.expected = expected;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                byte[] a = new byte[b.readableBytes()];
                b.readBytes(a);
                bytes.writeBytes(a);
            } finally {
                b.release();
            }
            if (bytes.size() >= expected) {
                done.complete(bytes.toByteArray());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.fireExceptionCaught(cause);
        }
    }

    /** Counts and releases what it reads; at the peer's end of stream completes with the count, then acts. */
    private static final class CountUntilEnd extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<Long> end;
        private final java.util.function.Consumer<ChannelHandlerContext> then;
        private long n;

        CountUntilEnd(CompletableFuture<Long> end, java.util.function.Consumer<ChannelHandlerContext> then) {
            this.end = end;
            this.then = then;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            n += ((ByteBuf) msg).readableBytes();
            ((ByteBuf) msg).release();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownEvent) {
                end.complete(n);
                then.accept(ctx);
            }
        }
    }

    private static byte[] random(int n, long seed) {
        byte[] a = new byte[n];
        new Random(seed).nextBytes(a);
        return a;
    }

    private static RdmaChannelCounters echo(Object... options) throws Exception {
        return echoOn(group, false, options);
    }

    /**
     * Echoes writes of many sizes; with {@code registered}, they are allocated from the channel's {@code alloc()}.
     *
     * @return the client channel's counters
     */
    private static RdmaChannelCounters echoOn(EventLoopGroup group, boolean registered, Object... options) throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        Channel server = server(group, address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new Echo());
            }
        }, options);
        try {
            // writes of many sizes: packed into messages and cut across them
            int[] sizes = {1, 7, 100, 1_000, 4_096, 65_536, 65_537, 300_000, 3, 0, 12_345};
            int total = 0;
            for (int s : sizes) {
                total += s;
            }
            byte[] data = random(total, 42);
            Collect collect = new Collect(total);
            Channel c = client(group, address, collect, options);
            int off = 0;
            for (int s : sizes) {
                ByteBuf b = registered ? c.alloc().directBuffer(s) : Unpooled.wrappedBuffer(data, off, s);
                if (registered) {
                    b.writeBytes(data, off, s);
                }
                c.write(b);
                off += s;
            }
            c.flush();
            assertThat(collect.done.get(T, TimeUnit.SECONDS)).isEqualTo(data);
            // every buffer lent to Collect came back (it releases each before the last one completes it)
            assertThat(((RdmaChannel) c).lentBuffers()).as("receive buffers still lent").isZero();
            RdmaChannelCounters sent = ((RdmaChannel) c).counters();
            assertThat(sent.receiveBuffersLent()).isZero();
            dev.rdma4j.QpAttributes qa = ((RdmaChannel) c).queuePair().query();
            System.out.printf("RdmaChannel's QP from rdma_cm: ACK timeout %d, retry count %d, RNR retry %d%n",
                    qa.timeout(), qa.retryCount(), qa.rnrRetry());
            c.close().sync();
            return sent;
        } finally {
            server.close().sync();
        }
    }

    @Test
    void echoesWritesOfEverySize() throws Exception {
        echo();
    }

    @Test
    void writesFromTheRegisteredAllocatorLeaveWithoutACopy() throws Exception {
        RdmaChannelCounters sent = echoOn(group, true, RdmaChannelOption.REGISTERED_ALLOCATOR, true);
        // 4,096, 65,536, 65,537, 300,000 and 12,345 bytes are in registered blocks: one message each, and 300,000 in
        // five, every one from the buffer (the pipe's own holds of its earlier pieces do not count as another
        // holder); none reaches the rendezvous threshold
        assertThat(sent.zeroCopyMessages()).isGreaterThanOrEqualTo(9);
        assertThat(sent.rendezvousMessages()).isZero();
        // and without the allocator (heap buffers here) every write is copied
        RdmaChannelCounters heap = echoOn(group, false);
        assertThat(heap.zeroCopyMessages()).isZero();
        assertThat(heap.rendezvousMessages()).isZero();
    }

    /**
     * Large direct writes go by read rendezvous (the receiver RDMA READs them), in their place in the stream between
     * small copied writes; a write over {@code RENDEZVOUS_MAX} is several rendezvous; the sender's buffers are let go
     * once read. A JFR recording with rdma4j's configuration sees each rendezvous on both sides
     * ({@code dev.rdma4j.netty.Rendezvous}).
     */
    @Test
    void largeWritesAreReadByThePeerInStreamOrder(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        jdk.jfr.Recording recording;
        try (var jfc = new java.io.InputStreamReader(dev.rdma4j.Rdma.class.getResourceAsStream("/dev/rdma4j/rdma4j.jfc"),
                java.nio.charset.StandardCharsets.UTF_8)) {
            recording = new jdk.jfr.Recording(jdk.jfr.Configuration.create(jfc));
        }
        recording.start();
        InetSocketAddress address = NettyTestSupport.address();
        int threshold = 256 << 10;
        int[] sizes = {100, 5 << 20, 7, 300_000, threshold - 1, 1 << 20, 3};
        int total = 0;
        for (int n : sizes) {
            total += n;
        }
        byte[] data = random(total, 7);
        Collect collect = new Collect(total);
        CompletableFuture<Channel> child = new CompletableFuture<>();
        Channel server = collectingServer(address, collect, child);
        try {
            Channel c = client(address, new ChannelInboundHandlerAdapter(), RdmaChannelOption.RENDEZVOUS_THRESHOLD,
                    threshold);
            java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(
                    (int) java.util.Arrays.stream(sizes).filter(n -> n >= 4096).count());
            int off = 0;
            for (int n : sizes) {
                ByteBuf b = n >= 4096 ? new Released(n, released) : Unpooled.buffer(n);
                b.writeBytes(data, off, n);
                c.write(b);
                off += n;
            }
            c.flush();
            assertThat(collect.done.get(T, TimeUnit.SECONDS)).isEqualTo(data);
            // 5 MiB in five pieces of RENDEZVOUS_MAX (1 MiB), 300,000 B, 1 MiB; the write one byte short is sent
            assertThat(((RdmaChannel) c).counters().rendezvousMessages()).isEqualTo(7);
            assertThat(((RdmaChannel) child.get()).counters().readMessages()).isEqualTo(7);
            // the peer's count of reads comes with its next message
            assertThat(released.await(T, TimeUnit.SECONDS)).as("the sender let every direct write go").isTrue();
            c.close().sync();
        } finally {
            server.close().sync();
            recording.stop();
        }
        java.nio.file.Path file = dir.resolve("rendezvous.jfr");
        recording.dump(file);
        recording.close();
        var events = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.rdma4j.netty.Rendezvous")).toList();
        long moved = 5L * (1 << 20) + 300_000 + (1 << 20);
        assertThat(events.stream().filter(e -> e.getBoolean("sent")).mapToLong(e -> e.getLong("bytes")).sum())
                .as("the sender's 7 rendezvous").isEqualTo(moved);
        assertThat(events.stream().filter(e -> !e.getBoolean("sent")).mapToLong(e -> e.getLong("bytes")).sum())
                .as("the receiver's 7 reads").isEqualTo(moved);
        assertThat(events).hasSize(14).allSatisfy(e -> assertThat(e.getBoolean("succeeded")).isTrue());
    }

    /**
     * A sender that closes right after a large write: its close lingers until the peer read it, and the peer, which
     * reads nothing until later (auto-read off), still gets every byte, then the end.
     */
    @Test
    void aLargeWriteBeforeACloseIsReadAfterIt() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        byte[] data = random(3 << 20, 11);
        Collect collect = new Collect(data.length);
        CompletableFuture<Channel> child = new CompletableFuture<>();
        Channel server = collectingServer(address, collect, child, ChannelOption.AUTO_READ, false);
        try {
            Channel c = client(address, new ChannelInboundHandlerAdapter());
            java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
            c.writeAndFlush(new Released(data.length, released).writeBytes(data));
            c.close().sync();
            Channel s = child.get(T, TimeUnit.SECONDS);
            s.config().setAutoRead(true);
            assertThat(collect.done.get(T, TimeUnit.SECONDS)).isEqualTo(data);
            assertThat(s.closeFuture().await(T, TimeUnit.SECONDS)).as("closed after the peer's close").isTrue();
            assertThat(released.await(T, TimeUnit.SECONDS)).as("the sender let the write go").isTrue();
        } finally {
            server.close().sync();
        }
    }

    /** A server whose one connection ({@code child}) collects what it reads. */
    private static Channel collectingServer(InetSocketAddress address, Collect collect,
            CompletableFuture<Channel> child, Object... options) throws Exception {
        return server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                child.complete(ch);
                ch.pipeline().addLast(collect);
            }
        }, options);
    }

    /**
     * Writes posted before a close succeed, as a socket's written bytes do, when a write ahead of them waits for its
     * send (registered memory that someone else holds too) at the close: they are delivered during the linger, so
     * their promises must not fail (found by review: Netty failed them, being still in the outbound buffer).
     */
    @Test
    void writesPostedBeforeACloseSucceedBehindAWaitingOne() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        byte[] data = random(100_000 + 100, 11);
        Collect collect = new Collect(data.length);
        Channel server = collectingServer(address, collect, new CompletableFuture<>());
        try {
            Channel c = client(address, new ChannelInboundHandlerAdapter(), RdmaChannelOption.REGISTERED_ALLOCATOR,
                    true);
            ByteBuf shared = c.alloc().directBuffer(100_000).writeBytes(data, 0, 100_000);
            shared.retain(); // held by the test too: its bytes wait in the outbound buffer until the device read them
            io.netty.channel.ChannelFuture[] writes = new io.netty.channel.ChannelFuture[2];
            // one loop task: the close comes before any send's completion is handled
            c.eventLoop().submit(() -> {
                writes[0] = c.write(shared);
                writes[1] = c.writeAndFlush(Unpooled.wrappedBuffer(data, 100_000, 100));
                c.close();
            }).sync();
            assertThat(collect.done.get(T, TimeUnit.SECONDS)).isEqualTo(data);
            for (io.netty.channel.ChannelFuture w : writes) {
                assertThat(w.await(T, TimeUnit.SECONDS)).isTrue();
                assertThat(w.cause()).as("a posted write's outcome").isNull();
            }
            assertThat(((RdmaChannel) c).counters().zeroCopyMessages()).as("the first from registered memory")
                    .isPositive();
            c.closeFuture().sync();
            shared.release();
        } finally {
            server.close().sync();
        }
    }

    /** A direct buffer (one piece, unregistered: read by rendezvous) that counts down {@code released} when freed. */
    private static final class Released extends io.netty.buffer.UnpooledDirectByteBuf {
        private final java.util.concurrent.CountDownLatch released;

        Released(int capacity, java.util.concurrent.CountDownLatch released) {
            super(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, capacity, capacity);
            this.released = released;
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            released.countDown();
        }
    }

    @Test
    void echoesOnABusyPollingLoop() throws Exception {
        EventLoopGroup busy = new MultiThreadIoEventLoopGroup(1,
                RdmaIoHandler.newFactory(dev.rdma4j.engine.PollingMode.BUSY_POLL));
        try {
            echoOn(busy, false);
        } finally {
            busy.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void echoesWithBusyPolledChannelsOnAnEventLoop() throws Exception {
        echo(RdmaChannelOption.BUSY_POLL, true);
    }

    @Test
    void echoesWithFewSmallBuffersByCredits() throws Exception {
        // 2 receive buffers of 256 bytes: every message waits for a credit, none may meet RNR
        RdmaChannelCounters sent = echo(RdmaChannelOption.RECEIVE_BUFFERS, 2, RdmaChannelOption.SEND_BUFFERS, 2,
                RdmaChannelOption.MESSAGE_SIZE, 256);
        assertThat(sent.creditStalls()).as("~380 KiB through 2 credits of 256 B: the writes waited").isPositive();
    }

    @Test
    void discardsAStreamWithTheSameChecksum() throws Exception {
        discard(1L << 30, 65_536, false); // 1 GiB of heap writes, copied
    }

    @Test
    void discardsLargeDirectWritesReadByThePeerWithTheSameChecksum() throws Exception {
        // 256 MiB in 1 MiB direct writes: every one a rendezvous, at most RENDEZVOUS_IN_FLIGHT unread at a time
        assertThat(discard(256L << 20, 1 << 20, true)).isEqualTo(256);
    }

    /**
     * Streams {@code total} bytes in writes of {@code chunkSize} with Netty's back-pressure to a server that checks
     * their CRC32.
     *
     * @return the rendezvous the writer announced
     */
    private static long discard(long total, int chunkSize, boolean direct) throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        CompletableFuture<Long> serverCrc = new CompletableFuture<>();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    final CRC32 crc = new CRC32();
                    long n;

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        n += b.readableBytes();
                        crc.update(b.nioBuffer());
                        b.release();
                        if (n == total) {
                            serverCrc.complete(crc.getValue());
                        }
                    }
                });
            }
        });
        try {
            Channel c = client(address, new ChannelInboundHandlerAdapter());
            CRC32 crc = new CRC32();
            byte[] chunk = random(chunkSize, 7);
            long sent = 0;
            ChannelFuture last = null;
            while (sent < total) {
                if (!c.isWritable()) { // back-pressure: wait for the outbound buffer to drain below its low mark
                    CompletableFuture<Void> writable = new CompletableFuture<>();
                    c.eventLoop().execute(() -> {
                        if (c.isWritable()) {
                            writable.complete(null);
                        } else {
                            c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                                    if (ctx.channel().isWritable()) {
                                        ctx.pipeline().remove(this);
                                        writable.complete(null);
                                    }
                                }
                            });
                        }
                    });
                    writable.get(T, TimeUnit.SECONDS);
                }
                chunk[0] = (byte) sent; // not the same bytes every time
                crc.update(chunk);
                last = c.writeAndFlush(direct ? c.alloc().directBuffer(chunkSize).writeBytes(chunk)
                        : Unpooled.copiedBuffer(chunk));
                sent += chunk.length;
            }
            last.sync();
            assertThat(serverCrc.get(T, TimeUnit.SECONDS)).isEqualTo(crc.getValue());
            long rendezvous = ((RdmaChannel) c).counters().rendezvousMessages();
            c.close().sync();
            return rendezvous;
        } finally {
            server.close().sync();
        }
    }

    @Test
    void halfCloseEndsThePeersInputAndItsAnswerStillArrives() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        CompletableFuture<Long> serverSawEnd = new CompletableFuture<>();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new CountUntilEnd(serverSawEnd,
                        ctx -> ctx.writeAndFlush(Unpooled.copiedBuffer("bye", StandardCharsets.US_ASCII))
                                .addListener(f -> ctx.close())));
            }
        }, ChannelOption.ALLOW_HALF_CLOSURE, true);
        try {
            Collect collect = new Collect(3);
            RdmaChannel c = (RdmaChannel) client(address, collect);
            c.writeAndFlush(Unpooled.copiedBuffer(random(5_000, 1))).sync();
            c.shutdownOutput().sync();
            assertThat(c.isOutputShutdown()).isTrue();
            assertThat(serverSawEnd.get(T, TimeUnit.SECONDS)).isEqualTo(5_000L);
            assertThat(new String(collect.done.get(T, TimeUnit.SECONDS), StandardCharsets.US_ASCII)).isEqualTo("bye");
            // the server closed after its answer: the client's channel closes too
            assertThat(c.closeFuture().await(T, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.close().sync();
        }
    }

    @Test
    void shutdownOutputAfterWritesWaitingForCreditsSendsThemAllFirst() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        CompletableFuture<Long> serverSawEnd = new CompletableFuture<>();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new CountUntilEnd(serverSawEnd, ChannelHandlerContext::close));
            }
        }, ChannelOption.ALLOW_HALF_CLOSURE, true, RdmaChannelOption.RECEIVE_BUFFERS, 2,
                RdmaChannelOption.MESSAGE_SIZE, 256);
        try {
            RdmaChannel c = (RdmaChannel) client(address, new ChannelInboundHandlerAdapter(),
                    RdmaChannelOption.MESSAGE_SIZE, 256);
            // 400 messages' worth with 2 credits: most wait in the outbound buffer when the output is shut down
            ChannelFuture written = c.writeAndFlush(Unpooled.wrappedBuffer(random(100_000, 3)));
            ChannelFuture shut = c.shutdownOutput();
            ChannelFuture late = c.writeAndFlush(Unpooled.wrappedBuffer(new byte[10]));
            assertThat(shut.await(T, TimeUnit.SECONDS)).isTrue();
            assertThat(shut.isSuccess()).isTrue();
            assertThat(late.await(T, TimeUnit.SECONDS)).isTrue();
            assertThat(late.cause()).as("a write after the shutdown fails alone")
                    .isInstanceOf(io.netty.channel.socket.ChannelOutputShutdownException.class);
            assertThat(serverSawEnd.get(T, TimeUnit.SECONDS)).isEqualTo(100_000L);
            assertThat(written.await(T, TimeUnit.SECONDS)).isTrue();
            assertThat(written.isSuccess()).isTrue();
            assertThat(c.closeFuture().await(T, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.close().sync();
        }
    }

    @Test
    void requestsAnsweredFromAnotherThreadWithTwoBuffersNeverStall() throws Exception {
        // the answer is written later, off the loop: credits owed must still reach the peer (no credit deadlock)
        InetSocketAddress address = NettyTestSupport.address();
        java.util.concurrent.ExecutorService answerer = java.util.concurrent.Executors.newSingleThreadExecutor();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        ByteBuf answer = Unpooled.copiedBuffer(b);
                        b.release();
                        answerer.execute(() -> ctx.writeAndFlush(answer));
                    }
                });
            }
        }, RdmaChannelOption.RECEIVE_BUFFERS, 2, RdmaChannelOption.MESSAGE_SIZE, 256);
        try {
            java.util.concurrent.BlockingQueue<ByteBuf> answers = new java.util.concurrent.LinkedBlockingQueue<>();
            Channel c = client(address, new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    answers.add((ByteBuf) msg);
                }
            }, RdmaChannelOption.RECEIVE_BUFFERS, 2, RdmaChannelOption.MESSAGE_SIZE, 256);
            for (int i = 0; i < 100; i++) {
                byte[] request = random(1 + i % 200, i);
                c.writeAndFlush(Unpooled.wrappedBuffer(request));
                ByteBuf got = Unpooled.buffer();
                while (got.readableBytes() < request.length) {
                    ByteBuf a = answers.poll(T, TimeUnit.SECONDS);
                    assertThat(a).as("answer %d (%s)", i, c).isNotNull();
                    got.writeBytes(a);
                    a.release();
                }
                assertThat(ByteBufUtilHolder.bytes(got)).isEqualTo(request);
            }
            c.close().sync();
        } finally {
            answerer.shutdownNow();
            server.close().sync();
        }
    }

    /** Bytes of a buffer. */
    private static final class ByteBufUtilHolder {
        static byte[] bytes(ByteBuf b) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            return a;
        }
    }

    @Test
    void thePeersCloseClosesTheChannel() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        ctx.writeAndFlush(Unpooled.copiedBuffer("last words", StandardCharsets.US_ASCII))
                                .addListener(f -> ctx.close());
                    }
                });
            }
        });
        try {
            Collect collect = new Collect(10);
            CompletableFuture<Throwable> caught = new CompletableFuture<>();
            Channel c = client(address, collect);
            c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    caught.complete(cause);
                }
            });
            assertThat(new String(collect.done.get(T, TimeUnit.SECONDS), StandardCharsets.US_ASCII))
                    .isEqualTo("last words");
            assertThat(c.closeFuture().await(T, TimeUnit.SECONDS)).as("closed after the peer's close").isTrue();
            assertThat(c.isActive()).isFalse();
            assertThat(caught).as("a close is no reset").isNotDone();
        } finally {
            server.close().sync();
        }
    }

    @Test
    void aKilledPeerResetsTheChannelWithAnException() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        CompletableFuture<String> read = new CompletableFuture<>();
        CompletableFuture<Throwable> caught = new CompletableFuture<>();
        CompletableFuture<Channel> child = new CompletableFuture<>();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                child.complete(ch);
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        read.complete(((ByteBuf) msg).toString(StandardCharsets.US_ASCII));
                        ((ByteBuf) msg).release();
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        caught.complete(cause);
                    }
                });
            }
        });
        Process p = null;
        try {
            java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(
                    ProcessHandle.current().info().command().orElseThrow()));
            cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                    .filter(a -> a.startsWith("--enable-native-access") || a.startsWith("-XX:")).toList());
            cmd.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"),
                    KilledPeerClient.class.getName(), address.getAddress().getHostAddress(),
                    Integer.toString(address.getPort())));
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            assertThat(read.get(T, TimeUnit.SECONDS)).isEqualTo("hello");
            p.destroyForcibly();
            assertThat(p.waitFor(T, TimeUnit.SECONDS)).isTrue();
            // its kernel disconnects the rdma_cm connection; no close came first: a reset
            assertThat(caught.get(T, TimeUnit.SECONDS)).isInstanceOf(java.io.IOException.class)
                    .hasMessageContaining("connection reset");
            assertThat(child.get().closeFuture().await(T, TimeUnit.SECONDS)).isTrue();
        } finally {
            if (p != null) {
                p.destroyForcibly();
            }
            server.close().sync();
        }
    }

    @Test
    void connectingToNoListenerFails() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        ChannelFuture f = new Bootstrap().group(group).channel(RdmaChannel.class)
                .handler(new ChannelInboundHandlerAdapter()).connect(address);
        assertThat(f.await(T, TimeUnit.SECONDS)).isTrue();
        assertThat(f.isSuccess()).isFalse();
        assertThat(f.cause()).isInstanceOf(java.io.IOException.class);
        assertThat(f.channel().closeFuture().await(T, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void http11WithNettysOwnCodecs() throws Exception {
        InetSocketAddress address = NettyTestSupport.address();
        Channel server = server(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                        new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                FullHttpRequest req = (FullHttpRequest) msg;
                                String body = "hello " + req.uri() + " " + req.content().readableBytes();
                                req.release();
                                FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                                        HttpResponseStatus.OK, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
                                res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
                                ctx.writeAndFlush(res);
                            }
                        });
            }
        });
        try {
            java.util.concurrent.BlockingQueue<String> answers = new java.util.concurrent.LinkedBlockingQueue<>();
            Channel c = new Bootstrap().group(group).channel(RdmaChannel.class).handler(new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20),
                            new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    FullHttpResponse res = (FullHttpResponse) msg;
                                    answers.add(res.status().code() + " "
                                            + res.content().toString(StandardCharsets.UTF_8));
                                    res.release();
                                }
                            });
                }
            }).connect(address).sync().channel();
            for (int i = 0; i < 3; i++) { // keep-alive: three requests on one connection
                FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/r" + i,
                        Unpooled.wrappedBuffer(random(100_000, i)));
                req.headers().set(HttpHeaderNames.HOST, "rdma").setInt(HttpHeaderNames.CONTENT_LENGTH, 100_000);
                c.writeAndFlush(req);
                assertThat(answers.poll(T, TimeUnit.SECONDS)).isEqualTo("200 hello /r" + i + " 100000");
            }
            c.close().sync();
        } finally {
            server.close().sync();
        }
    }
}
