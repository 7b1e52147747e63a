package dev.rdma4j.examples;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;

/**
 * A Netty echo server over RDMA (rdma4j-netty): an ordinary {@link ServerBootstrap} with rdma4j's event loop
 * ({@link RdmaIoHandler}) and channel ({@link RdmaServerChannel}); each connection's handler writes every buffer it
 * reads back. Serves CLIENTS connections (at once or one after another), printing for each what it echoed and how its
 * bytes left ({@link RdmaChannel#counters()}: a received buffer written back is registered memory, so it leaves
 * without a copy), then exits.
 *
 * <p>Run on the class path with {@code --enable-native-access=ALL-UNNAMED} (rdma4j calls libibverbs and librdmacm
 * through the FFM API; on the module path, {@code --enable-native-access=dev.rdma4j}); nothing else is needed.
 * {@code examples/run netty-echo} runs it with {@link NettyEchoClient}.
 */
public final class NettyEchoServer {
    private NettyEchoServer() {
    }

    /**
     * Listens on ADDRESS:PORT (an address of the RDMA device) and serves CLIENTS connections.
     *
     * @param args ADDRESS PORT CLIENTS
     * @throws Exception if the listener fails
     */
    public static void main(String[] args) throws Exception {
        var address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        var served = new CountDownLatch(Integer.parseInt(args[2]));
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(RdmaServerChannel.class)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new Echo(served));
                        }
                    })
                    .bind(address).sync().channel();
            System.out.println("listening on " + server.localAddress());
            served.await();
            server.close().sync();
        } finally {
            group.shutdownGracefully().sync();
        }
    }

    /** Writes back what it reads; when its connection ends, says what it echoed. */
    private static final class Echo extends ChannelInboundHandlerAdapter {
        private final CountDownLatch served;
        private long bytes;

        Echo(CountDownLatch served) {
            this.served = served;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            bytes += ((ByteBuf) msg).readableBytes();
            ctx.write(msg); // the received buffer itself: released by the channel once sent
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            var sent = ((RdmaChannel) ctx.channel()).counters();
            System.out.printf("echoed %d bytes to %s (zero-copy %d, copied %d)%n", bytes,
                    ctx.channel().remoteAddress(), sent.zeroCopyBytes(), sent.copiedBytes());
            served.countDown();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            cause.printStackTrace();
            ctx.close();
        }
    }
}
