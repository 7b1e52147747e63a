package dev.rdma4j.bench;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the Netty and gRPC device benchmarks share ({@link NettyDeviceBench}, {@link GrpcDeviceBench}): the two
 * transports compared, the device's IPv4 address both listen on, and closing what a trial made. Public for JMH's
 * generated code, which names {@link Transport}.
 */
public final class NettyBench {
    /** How long set-up, tear-down and one benchmark invocation may wait before failing (the guest is slow). */
    static final long WAIT_SECONDS = 120;

    private NettyBench() {
    }

    /** The transports a benchmark runs over ({@code @Param transport}). */
    public enum Transport {
        /** rdma4j-netty: {@link RdmaChannel} on {@link RdmaIoHandler}'s loops (EVENT mode). */
        rdma,
        /**
         * Netty's native epoll TCP transport (netty-transport-native-epoll, linux-x86_64), TCP_NODELAY, on the
         * same address.
         */
        tcp;

        /** The event loops' I/O handler. */
        IoHandlerFactory ioHandler() {
            if (this == rdma) {
                return RdmaIoHandler.newFactory();
            }
            Epoll.ensureAvailability(); // the native part, not NIO behind our back
            return EpollIoHandler.newFactory();
        }

        /** The listener's channel class. */
        Class<? extends ServerChannel> serverChannel() {
            return this == rdma ? RdmaServerChannel.class : EpollServerSocketChannel.class;
        }

        /** The connection's channel class. */
        Class<? extends Channel> channel() {
            return this == rdma ? RdmaChannel.class : EpollSocketChannel.class;
        }
    }

    /**
     * The RDMA device's IPv4 address (the one its best RoCE GID carries: rxe0's in the Soft-RoCE guest) and a random
     * port: both transports listen on it, so TCP runs on the interface RDMA's packets use.
     */
    static InetSocketAddress address() throws Exception {
        InetAddress ip;
        try (Context ctx = Device.byNameOrDefault(null).open()) {
            ip = ctx.bestRoceGid(1).gid().ipv4()
                    .orElseThrow(() -> new IllegalStateException("no IPv4 GID on the RDMA device"));
        }
        return new InetSocketAddress(ip, 20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    /** Closes {@code c} if there is one, waiting for it. */
    static void close(Channel c) {
        if (c != null) {
            ChannelFuture f = c.close();
            f.awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** Shuts {@code g} down if there is one, waiting for it (quiet period 0). */
    static void shutdown(EventLoopGroup g) {
        if (g != null) {
            g.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }
}
