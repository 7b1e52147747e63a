package dev.rdma4j.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A client process for {@code RdmaChannelDeviceTest}'s killed-peer test: connects to {@code args[0]:args[1]}, writes
 * "hello", prints "sent" and waits on its standard input until the test kills it.
 */
public final class KilledPeerClient {
    private KilledPeerClient() {
    }

    /**
     * Connects, writes, waits to be killed.
     *
     * @param args the server's address and port
     * @throws Exception if the connect fails
     */
    public static void main(String[] args) throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        Channel c = new Bootstrap().group(group).channel(RdmaChannel.class).handler(new ChannelInboundHandlerAdapter())
                .connect(new InetSocketAddress(args[0], Integer.parseInt(args[1]))).sync().channel();
        c.writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII)).sync();
        System.out.println("sent");
        System.out.flush();
        System.in.read(); // killed here
    }
}
