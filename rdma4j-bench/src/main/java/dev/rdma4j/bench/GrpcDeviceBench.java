package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * gRPC-java (grpc-netty, not shaded) unary calls over rdma4j-netty against the same over Netty's epoll TCP transport,
 * on the RDMA device's IPv4 address. The service is defined by hand (no protobuf): {@code bench.Echo/Unary} takes and
 * returns bytes, the server answers with the request. {@code unary64}: one blocking unary call of a 64-byte request
 * from the benchmark thread ({@code ClientCalls.blockingUnaryCall}: the response is handled on the calling thread),
 * the server's handler on its event loop ({@code directExecutor()}); event loop groups of one thread each: the
 * listener's, the server's connections', the client's. The score is one call's round trip.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class GrpcDeviceBench {
    /** Bytes as they are: request and response marshaller. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("reading a message").withCause(e).asRuntimeException();
            }
        }
    };

    /** The echo method. */
    static final MethodDescriptor<byte[], byte[]> UNARY = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Echo", "Unary"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    @Param({"rdma", "tcp"})
    public Transport transport;

    /**
     * The server to call when it runs elsewhere ({@link NettyTwoHost}); {@code null} (JMH): the state starts its own
     * on {@link NettyBench#address()}.
     */
    InetSocketAddress remote;

    private EventLoopGroup boss;
    private EventLoopGroup serverWorkers;
    private EventLoopGroup clientGroup;
    private Server server;
    private ManagedChannel channel;
    private byte[] request;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        try {
            clientGroup = new MultiThreadIoEventLoopGroup(1, transport.ioHandler());
            InetSocketAddress address = remote;
            if (address == null) {
                boss = new MultiThreadIoEventLoopGroup(1, transport.ioHandler());
                serverWorkers = new MultiThreadIoEventLoopGroup(1, transport.ioHandler());
                address = NettyBench.address();
                server = startServer(transport, address, boss, serverWorkers);
            }
            channel = NettyChannelBuilder.forAddress(address)
                    .channelType(transport.channel())
                    .eventLoopGroup(clientGroup)
                    .directExecutor()
                    .usePlaintext()
                    .build();
            request = new byte[64];
            new Random(3).nextBytes(request);
            // connected and the first calls made outside the measurement, with a deadline (set-up in the guest is slow)
            for (int i = 0; i < 10; i++) {
                byte[] r = ClientCalls.blockingUnaryCall(channel, UNARY,
                        CallOptions.DEFAULT.withDeadlineAfter(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS), request);
                if (!Arrays.equals(r, request)) {
                    throw new IllegalStateException("the echo answered " + r.length + " other bytes");
                }
            }
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
            channel = null;
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
            server = null;
        }
        // connections' loops before the listener's (rdma_cm ids accepted on the boss live on the workers)
        NettyBench.shutdown(clientGroup);
        NettyBench.shutdown(serverWorkers);
        NettyBench.shutdown(boss);
        clientGroup = null;
        serverWorkers = null;
        boss = null;
    }

    /**
     * The echo service ({@code bench.Echo/Unary} answers the request) on {@code address} over {@code transport}, its
     * handler on the connections' event loops.
     */
    static Server startServer(Transport transport, InetSocketAddress address, EventLoopGroup boss,
            EventLoopGroup workers) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("bench.Echo")
                .addMethod(UNARY, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .build();
        return NettyServerBuilder.forAddress(address)
                .channelType(transport.serverChannel())
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                .directExecutor()
                .addService(service)
                .build()
                .start();
    }

    @Benchmark
    public byte[] unary64() {
        return ClientCalls.blockingUnaryCall(channel, UNARY, CallOptions.DEFAULT, request);
    }
}
