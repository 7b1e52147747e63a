package dev.rdma4j.bench;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaChannelCounters;
import dev.rdma4j.netty.RdmaChannelOption;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * How many bytes rdma4j-netty copies into its send buffers per byte it sends, for gRPC unary calls with large values
 * (issue 33, item 5): the echo service of {@link GrpcDeviceBench} ({@code bench.Echo/Unary}, a hand-written method
 * over byte arrays) over {@link RdmaChannel}s, the server answering each request with the request's bytes, so both
 * directions carry the value. Prints each side's {@link RdmaChannelCounters} for the measured calls (the first calls,
 * which connect, are left out) and the copied bytes per byte sent, with the calls' mean time.
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench/target/rdma4j-bench.jar dev.rdma4j.bench.GrpcCopies \
 *       [default|registered] [CALLS] [VALUE_BYTES]
 * </pre>
 *
 * {@code registered} sets {@link RdmaChannelOption#REGISTERED_ALLOCATOR} on both sides (gRPC then allocates its
 * messages from the event loop's registered memory); {@code default} leaves gRPC's own allocator. Defaults:
 * {@code registered}, 8 calls, 4 MiB values.
 */
public final class GrpcCopies {
    private GrpcCopies() {
    }

    /**
     * Runs the measurement.
     *
     * @param args allocator ({@code default} or {@code registered}), calls, value bytes
     * @throws Exception if a call fails or the echo differs
     */
    public static void main(String[] args) throws Exception {
        boolean registered = !(args.length > 0 && args[0].equals("default"));
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int valueBytes = args.length > 2 ? Integer.parseInt(args[2]) : 4 << 20;
        List<RdmaChannel> clients = new CopyOnWriteArrayList<>();
        List<RdmaChannel> servers = new CopyOnWriteArrayList<>();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        EventLoopGroup serverLoop = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        EventLoopGroup clientLoop = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        Server server = null;
        ManagedChannel channel = null;
        try {
            InetSocketAddress address = NettyBench.address();
            ServerServiceDefinition service = ServerServiceDefinition.builder("bench.Echo")
                    .addMethod(GrpcDeviceBench.UNARY, ServerCalls.asyncUnaryCall((req, out) -> {
                        out.onNext(req);
                        out.onCompleted();
                    }))
                    .build();
            server = NettyServerBuilder.forAddress(address)
                    .channelFactory(() -> {
                        RdmaServerChannel s = new RdmaServerChannel();
                        s.pipeline().addLast(new Accepted(servers)); // before gRPC's acceptor: sees each child
                        return s;
                    })
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(serverLoop)
                    .withChildOption(RdmaChannelOption.REGISTERED_ALLOCATOR, registered)
                    .maxInboundMessageSize(valueBytes + 1024)
                    .addService(service)
                    .build()
                    .start();
            channel = NettyChannelBuilder.forAddress(address)
                    .channelFactory(() -> {
                        RdmaChannel c = new RdmaChannel();
                        clients.add(c);
                        return c;
                    }, InetSocketAddress.class)
                    .eventLoopGroup(clientLoop)
                    .withOption(RdmaChannelOption.REGISTERED_ALLOCATOR, registered)
                    .maxInboundMessageSize(valueBytes + 1024)
                    .usePlaintext()
                    .build();
            byte[] value = new byte[valueBytes];
            new Random(5).nextBytes(value);
            byte[] small = Arrays.copyOf(value, 64);
            call(channel, small); // connected outside the measurement
            RdmaChannelCounters client0 = sum(clients);
            RdmaChannelCounters server0 = sum(servers);
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                value[0] = (byte) i;
                call(channel, value);
            }
            long nanos = System.nanoTime() - start;
            RdmaChannelCounters client = sum(clients).minus(client0);
            RdmaChannelCounters srv = sum(servers).minus(server0);
            System.out.printf("gRPC unary echo over rdma4j-netty: %d calls, %d-byte values, allocator %s, %.1f ms"
                    + " a call%n", calls, valueBytes, registered ? "registered (REGISTERED_ALLOCATOR)" : "gRPC's default",
                    nanos / 1e6 / calls);
            print("client sent", client);
            print("server sent", srv);
            RdmaChannelCounters both = client.plus(srv);
            System.out.printf("copied per byte sent: %.4f (%d of %d bytes)%n", both.copiedPerByteSent(),
                    both.copiedBytes(), both.bytesSent());
        } finally {
            if (channel != null) {
                channel.shutdownNow().awaitTermination(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            if (server != null) {
                server.shutdownNow().awaitTermination(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            NettyBench.shutdown(clientLoop);
            NettyBench.shutdown(serverLoop);
            NettyBench.shutdown(boss);
        }
    }

    private static void call(ManagedChannel channel, byte[] value) {
        byte[] r = ClientCalls.blockingUnaryCall(channel, GrpcDeviceBench.UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS), value);
        if (!Arrays.equals(r, value)) {
            throw new IllegalStateException("the echo answered " + r.length + " other bytes");
        }
    }

    private static RdmaChannelCounters sum(List<RdmaChannel> channels) {
        RdmaChannelCounters s = RdmaChannelCounters.NONE;
        for (RdmaChannel c : channels) {
            s = s.plus(c.counters());
        }
        return s;
    }

    private static void print(String side, RdmaChannelCounters c) {
        System.out.printf("%s %d bytes: copied %d in %d messages, zero-copy %d in %d, rendezvous %d in %d;"
                + " copied per byte sent %.4f%n", side, c.bytesSent(), c.copiedBytes(), c.copiedMessages(),
                c.zeroCopyBytes(), c.zeroCopyMessages(), c.rendezvousBytes(), c.rendezvousMessages(),
                c.copiedPerByteSent());
    }

    /** In the listener's pipeline: records each accepted channel, then passes it on to gRPC's acceptor. */
    @ChannelHandler.Sharable
    private static final class Accepted extends ChannelInboundHandlerAdapter {
        private final List<RdmaChannel> channels;

        Accepted(List<RdmaChannel> channels) {
            this.channels = channels;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof RdmaChannel c) {
                channels.add(c);
            }
            ctx.fireChannelRead(msg);
        }
    }
}
