package dev.rdma4j.examples;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaChannelOption;
import dev.rdma4j.netty.RdmaIoHandler;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Netty echo client over RDMA (rdma4j-netty): an ordinary {@link Bootstrap} with rdma4j's event loop
 * ({@link RdmaIoHandler}) and channel ({@link RdmaChannel}). Writes COUNT messages of 16 KiB, allocated from the
 * channel's registered memory ({@link RdmaChannelOption#REGISTERED_ALLOCATOR}: they leave without a copy), checks
 * that the same bytes come back in order, prints how its bytes left ({@link RdmaChannel#counters()}) and exits.
 *
 * <p>Run on the class path with {@code --enable-native-access=ALL-UNNAMED} (on the module path,
 * {@code --enable-native-access=dev.rdma4j}); nothing else is needed. {@code examples/run netty-echo} runs it with
 * {@link NettyEchoServer}.
 */
public final class NettyEchoClient {
    private static final int MESSAGE = 16 << 10;

    private NettyEchoClient() {
    }

    /**
     * Connects to the echo server at ADDRESS:PORT and has COUNT messages echoed.
     *
     * @param args ADDRESS PORT COUNT
     * @throws Exception if the connection or the echo fails
     */
    public static void main(String[] args) throws Exception {
        var server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int count = Integer.parseInt(args[2]);
        byte[] sent = new byte[count * MESSAGE];
        new Random(1).nextBytes(sent);
        var echo = new Collect(sent.length);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        try {
            Channel c = new Bootstrap()
                    .group(group)
                    .channel(RdmaChannel.class)
                    .option(RdmaChannelOption.REGISTERED_ALLOCATOR, true)
                    .handler(echo)
                    .connect(server).sync().channel();
            for (int i = 0; i < count; i++) {
                c.write(c.alloc().directBuffer(MESSAGE).writeBytes(sent, i * MESSAGE, MESSAGE));
            }
            c.flush();
            byte[] got = echo.done.get(5, TimeUnit.MINUTES);
            if (!Arrays.equals(got, sent)) {
                throw new IllegalStateException("the echo differs from what was sent");
            }
            var counters = ((RdmaChannel) c).counters();
            System.out.printf("%d messages echoed by %s (%d bytes; sent zero-copy %d, copied %d)%n", count,
                    c.remoteAddress(), got.length, counters.zeroCopyBytes(), counters.copiedBytes());
            c.close().sync();
        } finally {
            group.shutdownGracefully().sync();
        }
    }

    /** Gathers what comes back until it has as much as was sent. */
    private static final class Collect extends ChannelInboundHandlerAdapter {
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
        private final byte[] bytes;
        private int have;

        Collect(int expected) {
            this.bytes = new byte[expected];
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                int n = Math.min(b.readableBytes(), bytes.length - have);
                b.readBytes(bytes, have, n);
                have += n;
            } finally {
                b.release();
            }
            if (have == bytes.length) {
                done.complete(bytes);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
