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
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * rdma4j-netty across two hosts (scripts/two-host-tests runs the same class on both): an {@code RdmaChannel} whose
 * peer's link goes down for good ends in {@code exceptionCaught} with the failed completion
 * ({@code RETRY_EXC_ERR}) and closes, instead of waiting for ever. Host 1 serves and loses its link; host 2 writes.
 */
@Tag("two-host")
class NettyLinkLossTwoHostTest {
    private static final Duration BOUND = Duration.ofMinutes(3);

    @Test
    void aLinkGoneForGoodFailsTheWriterWithAnIOExceptionAndClosesIt() throws Exception {
        int port = 20600;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        try (TwoHost.Control ctl = TwoHost.Control.open(port)) {
            if (TwoHost.isServer()) {
                AtomicLong received = new AtomicLong();
                CompletableFuture<Void> firstMebibyte = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(group).channel(RdmaServerChannel.class)
                        .childHandler(new ChannelInitializer<>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                    @Override
                                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                        if (received.addAndGet(((ByteBuf) msg).readableBytes()) >= 1 << 20) {
                                            firstMebibyte.complete(null);
                                        }
                                        ((ByteBuf) msg).release();
                                    }

                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        ctx.close(); // the client's reset, if it reaches us once the link is back
                                    }
                                });
                            }
                        }).bind(TwoHost.localAt(port + 1)).sync().channel();
                try {
                    ctl.barrier("listening");
                    ctl.barrier("sent"); // the client's first mebibyte is written
                    firstMebibyte.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                    assertThat(received.get()).isEqualTo(1 << 20);
                    TwoHost.link(false);
                    TwoHost.mark("netty-link-down-" + port); // through the shared directory: the wire is down
                    ctl.send("down"); // queued in the socket: TCP delivers it once the link is back
                    TwoHost.awaitMark("netty-writer-failed-" + port, BOUND.plusMinutes(1));
                    TwoHost.link(true);
                    assertThat(ctl.receive()).startsWith("failed");
                } finally {
                    TwoHost.link(true);
                    server.close().sync();
                }
                return;
            }
            ctl.barrier("listening");
            CompletableFuture<Throwable> caught = new CompletableFuture<>();
            Channel c = new Bootstrap().group(group).channel(RdmaChannel.class)
                    .option(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) BOUND.toMillis()) // emulated
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                            caught.complete(cause);
                        }
                    }).connect(TwoHost.peerAt(port + 1)).sync().channel();
            c.writeAndFlush(Unpooled.wrappedBuffer(new byte[1 << 20])).sync();
            ctl.barrier("sent");
            TwoHost.awaitMark("netty-link-down-" + port, Duration.ofMinutes(2));
            long t0 = System.nanoTime();
            for (int i = 0; i < 16; i++) { // posted until the credits run out; the rest waits in the outbound buffer
                c.write(Unpooled.wrappedBuffer(new byte[65_536]));
            }
            c.flush();
            Throwable e;
            try {
                e = caught.get(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException t) {
                throw new AssertionError("no failure within " + BOUND + ": " + c, t);
            }
            double took = (System.nanoTime() - t0) / 1e9;
            System.out.printf("two-host netty link down: the writer failed after %.1f s: %s%n", took, e);
            assertThat(e).isInstanceOf(IOException.class).hasMessageContaining("RETRY_EXC_ERR");
            assertThat(c.closeFuture().await(60, TimeUnit.SECONDS)).as("closed after the failure").isTrue();
            TwoHost.mark("netty-writer-failed-" + port);
            ctl.send("failed " + e.getMessage());
            assertThat(ctl.receive()).isEqualTo("down");
        } finally {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
    }
}
