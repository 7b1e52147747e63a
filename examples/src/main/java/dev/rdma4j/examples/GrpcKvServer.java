package dev.rdma4j.examples;

import dev.rdma4j.netty.RdmaChannelOption;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A gRPC key-value service ({@link KeyValue}) over RDMA: gRPC-java's own {@link NettyServerBuilder} with rdma4j-netty's
 * channel ({@link RdmaServerChannel}) and event loops ({@link RdmaIoHandler}); the service is as over TCP. Each
 * connection's {@code alloc()} is its loop's registered memory ({@link RdmaChannelOption#REGISTERED_ALLOCATOR}), so
 * gRPC writes its messages into memory the device can send from: the values it answers (4 MiB in
 * {@link GrpcKvClient}) leave without being copied into send buffers. Serves CLIENTS connections, then exits.
 *
 * <p>Run on the class path with {@code --enable-native-access=ALL-UNNAMED} (rdma4j calls libibverbs and librdmacm
 * through the FFM API; on the module path, {@code --enable-native-access=dev.rdma4j}); gRPC and Netty need nothing
 * more. {@code examples/run grpc} runs it with {@link GrpcKvClient}.
 */
public final class GrpcKvServer {
    private GrpcKvServer() {
    }

    /**
     * Listens on ADDRESS:PORT (an address of the RDMA device) and serves CLIENTS connections.
     *
     * @param args ADDRESS PORT CLIENTS
     * @throws Exception if the server fails
     */
    public static void main(String[] args) throws Exception {
        var address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        var served = new CountDownLatch(Integer.parseInt(args[2]));
        Map<String, byte[]> store = new ConcurrentHashMap<>();
        AtomicLong puts = new AtomicLong();
        AtomicLong gets = new AtomicLong();
        ServerServiceDefinition service = ServerServiceDefinition.builder("kv.KeyValue")
                .addMethod(KeyValue.PUT, ServerCalls.asyncUnaryCall((request, out) -> {
                    int end = KeyValue.keyEnd(request);
                    store.put(new String(request, 0, end, StandardCharsets.UTF_8),
                            Arrays.copyOfRange(request, end + 1, request.length));
                    puts.incrementAndGet();
                    out.onNext(new byte[0]);
                    out.onCompleted();
                }))
                .addMethod(KeyValue.GET, ServerCalls.asyncUnaryCall((request, out) -> {
                    byte[] value = store.get(new String(request, StandardCharsets.UTF_8));
                    gets.incrementAndGet();
                    if (value == null) {
                        out.onError(Status.NOT_FOUND.asRuntimeException());
                    } else {
                        out.onNext(value);
                        out.onCompleted();
                    }
                }))
                .build();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        Server server = NettyServerBuilder.forAddress(address)
                .channelType(RdmaServerChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                .withChildOption(RdmaChannelOption.REGISTERED_ALLOCATOR, true)
                .maxInboundMessageSize(KeyValue.MAX_MESSAGE)
                .addService(service)
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public void transportTerminated(Attributes transport) {
                        System.out.println("client " + transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) + " left");
                        served.countDown();
                    }
                })
                .build()
                .start();
        try {
            System.out.println("listening on " + address);
            served.await();
            System.out.printf("served %d puts and %d gets%n", puts.get(), gets.get());
        } finally {
            server.shutdownNow().awaitTermination(1, TimeUnit.MINUTES);
            workers.shutdownGracefully().sync(); // connections' loops before the listener's
            boss.shutdownGracefully().sync();
        }
    }
}
