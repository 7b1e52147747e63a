package dev.rdma4j.examples;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaChannelCounters;
import dev.rdma4j.netty.RdmaChannelOption;
import dev.rdma4j.netty.RdmaIoHandler;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A client of {@link GrpcKvServer}'s key-value service over RDMA: gRPC-java's own {@link NettyChannelBuilder} with
 * rdma4j-netty's channel ({@link RdmaChannel}, made by a channel factory here only to read its
 * {@link RdmaChannel#counters()} at the end; {@code channelType(RdmaChannel.class)} does as well otherwise) and
 * event loop ({@link RdmaIoHandler}). Puts COUNT values of VALUE_BYTES (default 4 MiB), gets each back, checks it,
 * and prints how its bytes left: with {@link RdmaChannelOption#REGISTERED_ALLOCATOR} gRPC writes its messages into
 * registered memory and they go without being copied into send buffers (but for the HTTP/2 frame headers, frames
 * spanning two of gRPC's buffers and pieces under 4 KiB: a few percent).
 *
 * <p>Run on the class path with {@code --enable-native-access=ALL-UNNAMED} (on the module path,
 * {@code --enable-native-access=dev.rdma4j}); gRPC and Netty need nothing more. {@code examples/run grpc} runs it
 * with {@link GrpcKvServer}.
 */
public final class GrpcKvClient {
    private GrpcKvClient() {
    }

    /**
     * Puts and gets COUNT values at the server at ADDRESS:PORT.
     *
     * @param args ADDRESS PORT COUNT [VALUE_BYTES]
     * @throws Exception if a call fails or a value comes back different
     */
    public static void main(String[] args) throws Exception {
        var server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int count = Integer.parseInt(args[2]);
        int valueBytes = args.length > 3 ? Integer.parseInt(args[3]) : 4 << 20;
        List<RdmaChannel> connections = new CopyOnWriteArrayList<>();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        ManagedChannel channel = NettyChannelBuilder.forAddress(server)
                .channelFactory(() -> {
                    RdmaChannel c = new RdmaChannel();
                    connections.add(c);
                    return c;
                }, InetSocketAddress.class)
                .eventLoopGroup(group)
                .withOption(RdmaChannelOption.REGISTERED_ALLOCATOR, true)
                .maxInboundMessageSize(KeyValue.MAX_MESSAGE)
                .usePlaintext()
                .build();
        try {
            Random random = new Random(2);
            for (int i = 0; i < count; i++) {
                byte[] value = new byte[valueBytes];
                random.nextBytes(value);
                call(channel, KeyValue.PUT, KeyValue.put("key-" + i, value));
                byte[] got = call(channel, KeyValue.GET, ("key-" + i).getBytes());
                if (!Arrays.equals(got, value)) {
                    throw new IllegalStateException("key-" + i + " came back as " + got.length + " other bytes");
                }
            }
            RdmaChannelCounters sent = RdmaChannelCounters.NONE;
            for (RdmaChannel c : connections) {
                sent = sent.plus(c.counters());
            }
            System.out.printf("put and got back %d values of %d bytes from %s%n", count, valueBytes, server);
            System.out.printf("sent %d bytes: zero-copy %d, copied %d (%.4f copied per byte sent)%n",
                    sent.bytesSent(), sent.zeroCopyBytes(), sent.copiedBytes(), sent.copiedPerByteSent());
        } finally {
            channel.shutdownNow().awaitTermination(1, TimeUnit.MINUTES);
            group.shutdownGracefully().sync();
        }
    }

    private static byte[] call(ManagedChannel channel, io.grpc.MethodDescriptor<byte[], byte[]> method,
            byte[] request) {
        return ClientCalls.blockingUnaryCall(channel, method,
                CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES), request);
    }
}
