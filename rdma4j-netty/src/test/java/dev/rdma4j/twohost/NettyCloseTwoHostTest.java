package dev.rdma4j.twohost;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * rdma4j-netty across two hosts: Netty's usual ending (write, {@code close()}, shut the event loop group down at once)
 * while the last messages are still on the wire. Over a real wire rxe sends a large message's packets as the peer
 * acknowledges them, so a queue pair destroyed by the loop's shut-down right after the close would cut them and the
 * close mark off: the peer would see a reset and miss data. Host 1 reads and checks; host 2 writes 8 MiB and ends.
 */
@Tag("two-host")
class NettyCloseTwoHostTest {
    private static final Duration BOUND = Duration.ofMinutes(3);
    private static final long TOTAL = 8L << 20;

    @Test
    void aGroupShutDownRightAfterACloseStillDeliversTheWritesAndTheClose() throws Exception {
        int port = 20620;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        try (TwoHost.Control ctl = TwoHost.Control.open(port)) {
            if (TwoHost.isServer()) {
                CompletableFuture<Long> end = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(group).channel(RdmaServerChannel.class)
                        .childHandler(new ChannelInitializer<>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                    private long n;

                                    @Override
                                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                        n += ((ByteBuf) msg).readableBytes();
                                        ((ByteBuf) msg).release();
                                    }

                                    @Override
                                    public void channelInactive(ChannelHandlerContext ctx) {
                                        end.complete(n);
                                    }

                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        end.completeExceptionally(new AssertionError("after " + n + " bytes", cause));
                                    }
                                });
                            }
                        }).bind(TwoHost.localAt(port + 1)).sync().channel();
                try {
                    ctl.barrier("listening");
                    long n = end.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                    assertThat(ctl.receive()).startsWith("ended");
                    assertThat(n).as("bytes read before the peer's normal close").isEqualTo(TOTAL);
                } finally {
                    server.close().sync();
                }
                return;
            }
            ctl.barrier("listening");
            EventLoopGroup own = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
            try {
                Channel c = new Bootstrap().group(own).channel(RdmaChannel.class)
                        .option(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) BOUND.toMillis())
                        .handler(new ChannelInboundHandlerAdapter()).connect(TwoHost.peerAt(port + 1)).sync()
                        .channel();
                byte[] chunk = new byte[65_536];
                ChannelFuture last = null;
                for (long sent = 0; sent < TOTAL; sent += chunk.length) {
                    last = c.writeAndFlush(Unpooled.wrappedBuffer(chunk));
                }
                last.sync(); // every write posted; the last 2 MiB (32 credits) are still on the wire
                c.close().sync();
                long t0 = System.nanoTime();
                own.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
                System.out.printf("two-host netty close: the group shut down %.0f ms after the close%n",
                        (System.nanoTime() - t0) / 1e6);
            } finally {
                own.shutdownGracefully(0, 5, TimeUnit.SECONDS);
            }
            ctl.send("ended");
        } finally {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
    }
}
