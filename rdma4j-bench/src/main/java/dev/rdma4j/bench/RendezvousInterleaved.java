package dev.rdma4j.bench;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaChannelOption;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * rdma4j-netty's read rendezvous against copied SENDs, for the choice of {@code RENDEZVOUS_THRESHOLD}'s default: two
 * {@code RdmaChannel}s to one server, one with the threshold at 4 KiB (every write below read by the peer), one with
 * it off (every write copied into send buffers and SENT), take turns writing 16 MiB of pooled direct buffers of one
 * size each (8 writes in flight), the order rotating every round; per size, the median time per MiB and the median of
 * the per-round ratios rendezvous / copied (below 1: rendezvous is faster).
 *
 * <pre>{@code java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.RendezvousInterleaved [ROUNDS [WARMUP]]}</pre>
 * In the Soft-RoCE guest like {@link NettyInterleaved}; not a JMH benchmark (one process, turns).
 */
public final class RendezvousInterleaved {
    private static final int MIB_PER_BLOCK = 16;
    private static final int IN_FLIGHT = 8;

    private RendezvousInterleaved() {
    }

    /** Counts what the server reads and lets the waiting writer know. */
    private static final class Counting extends ChannelInboundHandlerAdapter {
        final Semaphore bytes = new Semaphore(0);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            bytes.release(b.readableBytes());
            b.release();
        }
    }

    /** One client channel and the server side's counter of what it sent. */
    private record Writer(Channel channel, Counting counted) implements NettyInterleaved.Block {
        /** Writes {@code MIB_PER_BLOCK} MiB in writes of the channel's size and waits until the server read them. */
        @Override
        public void run() throws Exception {
            int size = channel.attr(SIZE).get();
            Semaphore window = new Semaphore(IN_FLIGHT);
            int writes = (MIB_PER_BLOCK << 20) / size;
            for (int i = 0; i < writes; i++) {
                if (!window.tryAcquire(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("a write did not complete: " + channel);
                }
                ByteBuf b = channel.alloc().directBuffer(size);
                b.writerIndex(size);
                channel.writeAndFlush(b).addListener(f -> window.release());
            }
            // a Semaphore counts in ints: 16 MiB fits
            if (!counted.bytes.tryAcquire(MIB_PER_BLOCK << 20, NettyBench.WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the server did not read the block: " + channel);
            }
        }
    }

    private static final io.netty.util.AttributeKey<Integer> SIZE = io.netty.util.AttributeKey.valueOf("size");

    /**
     * Runs 1 MiB, then 256 KiB writes.
     *
     * @param args rounds measured (default 20), warm-up rounds (default 5)
     * @throws Exception if a set-up or a block fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        EventLoopGroup serverGroup = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        EventLoopGroup clientGroup = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        try {
            for (int size : new int[] {1 << 20, 256 << 10}) {
                InetSocketAddress address = NettyBench.address();
                java.util.concurrent.BlockingQueue<Counting> accepted = new java.util.concurrent.LinkedBlockingQueue<>();
                Channel server = new ServerBootstrap().group(serverGroup).channel(RdmaServerChannel.class)
                        .childHandler(new io.netty.channel.ChannelInitializer<>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                Counting c = new Counting();
                                accepted.add(c);
                                ch.pipeline().addLast(c);
                            }
                        }).bind(address).sync().channel();
                Writer[] writers = new Writer[2];
                try {
                    for (int w = 0; w < 2; w++) {
                        Channel c = new Bootstrap().group(clientGroup).channel(RdmaChannel.class)
                                .option(RdmaChannelOption.RENDEZVOUS_THRESHOLD, w == 0 ? 4096 : Integer.MAX_VALUE)
                                .handler(new ChannelInboundHandlerAdapter()).connect(address).sync().channel();
                        c.attr(SIZE).set(size);
                        writers[w] = new Writer(c, accepted.poll(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS));
                    }
                    long[][] ns = NettyInterleaved.measure(rounds, warmup, writers);
                    NettyInterleaved.report((size >> 10) + " KiB direct writes, us per MiB (lower is better)",
                            new String[] {"rndv", "copied"}, ns, MIB_PER_BLOCK, false, new int[][] {{0, 1}});
                } finally {
                    for (Writer w : writers) {
                        if (w != null) {
                            NettyBench.close(w.channel());
                        }
                    }
                    NettyBench.close(server);
                }
            }
        } finally {
            NettyBench.shutdown(clientGroup);
            NettyBench.shutdown(serverGroup);
        }
    }
}
