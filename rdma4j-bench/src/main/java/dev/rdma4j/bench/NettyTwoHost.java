package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import dev.rdma4j.bench.NettyInterleaved.Block;
import io.grpc.Server;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * {@link NettyInterleaved} across two hosts: the server role on one host, the client role on the other, the
 * client's connections over {@code RdmaChannel} ({@code RdmaIoHandler.newFactory()}, EVENT mode) and over Netty's
 * epoll TCP on the same addresses, taking turns. Patterns, one block per connection and round, the order rotating,
 * the first rounds warm-up:
 *
 * <ul>
 *   <li>echo64: {@value NettyDeviceBench#ROUND_TRIPS} round trips of 64 B ({@link NettyDeviceBench.Echo}, the
 *       server's {@code EchoHandler});</li>
 *   <li>stream64k: {@value NettyDeviceBench#CHUNKS} 64 KiB writes with Netty's back-pressure
 *       ({@link NettyDeviceBench.Stream}); the block ends when the client receives the byte the server writes back
 *       once it has read the block's 8 MiB ({@link Acknowledge});</li>
 *   <li>grpc unary64: {@value #CALLS} blocking unary calls of 64 B ({@link GrpcDeviceBench}'s hand-made
 *       service).</li>
 * </ul>
 * Printed: each transport's median block (per operation, or MiB/s) and the median of the per-round time ratios rdma
 * / tcp. The server listens on the base port and the next ones (per pattern, rdma then tcp: echo +0/+1, stream
 * +2/+3, gRPC +4/+5), then on a plain TCP socket at +9: the client connects to it first (retrying for up to
 * {@value #CONTROL_WAIT_SECONDS} s, so both may start at once) and closes it when done, which ends the server.
 *
 * <pre>{@code java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.NettyTwoHost server ADDRESS [PORT]
 * java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.NettyTwoHost client SERVER [ROUNDS [WARMUP [PORT]]]}</pre>
 * ADDRESS: the server's RDMA device's IPv4 address (both transports listen on it); PORT: the base port (default
 * {@value #DEFAULT_PORT}); ROUNDS, WARMUP: rounds measured and warm-up rounds (default 40 and 20).
 * {@code scripts/bench-two-host} runs both roles on two Soft-RoCE guests.
 */
public final class NettyTwoHost {
    /** The default base port. */
    static final int DEFAULT_PORT = 18600;
    // the listeners' ports: base + pattern's offset + transport's ordinal (rdma, tcp); the control socket's
    private static final int ECHO = 0;
    private static final int STREAM = 2;
    private static final int GRPC = 4;
    private static final int CONTROL = 9;

    /** gRPC unary calls per block. */
    static final int CALLS = 16;
    private static final String[] NAMES = {"rdma", "tcp"};
    private static final int[][] PAIRS = {{0, 1}};
    /** How long the client waits for the server's control socket. */
    static final int CONTROL_WAIT_SECONDS = 300;

    private NettyTwoHost() {
    }

    /**
     * Runs one role.
     *
     * @param args {@code server ADDRESS [PORT]} or {@code client SERVER [ROUNDS [WARMUP [PORT]]]}
     * @throws Exception if a set-up or a block fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 2 || !(args[0].equals("server") || args[0].equals("client"))) {
            System.err.println("usage: NettyTwoHost server ADDRESS [PORT] | client SERVER [ROUNDS [WARMUP [PORT]]]");
            System.exit(2);
        }
        InetAddress ip = InetAddress.getByName(args[1]);
        if (args[0].equals("server")) {
            serve(ip, args.length > 2 ? Integer.parseInt(args[2]) : DEFAULT_PORT);
        } else {
            int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 40;
            int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 20;
            measure(ip, args.length > 4 ? Integer.parseInt(args[4]) : DEFAULT_PORT, rounds, warmup);
        }
    }

    private static InetSocketAddress address(InetAddress ip, int base, int pattern, Transport t) {
        return new InetSocketAddress(ip, base + pattern + t.ordinal());
    }

    // ---------------------------------------------------------------- server

    private static void serve(InetAddress ip, int base) throws Exception {
        List<EventLoopGroup> groups = new ArrayList<>();
        List<Channel> listeners = new ArrayList<>();
        List<Server> grpcServers = new ArrayList<>();
        try {
            for (Transport t : Transport.values()) {
                listeners.add(NettyDeviceBench.listen(t, group(groups, t), address(ip, base, ECHO, t),
                        NettyDeviceBench.EchoHandler::new));
                listeners.add(NettyDeviceBench.listen(t, group(groups, t), address(ip, base, STREAM, t),
                        Acknowledge::new));
                EventLoopGroup boss = group(groups, t);
                grpcServers.add(GrpcDeviceBench.startServer(t, address(ip, base, GRPC, t), boss, group(groups, t)));
            }
            try (ServerSocket control = new ServerSocket(base + CONTROL, 1, ip)) {
                System.out.println("server: listening on " + ip.getHostAddress() + " ports " + base + ".."
                        + (base + GRPC + 1) + "; waiting for the client on " + (base + CONTROL));
                try (Socket client = control.accept()) {
                    System.out.println("server: the client is here; serving until it is done");
                    client.getInputStream().transferTo(OutputStream.nullOutputStream());
                }
            }
            System.out.println("server: the client is done");
        } finally {
            for (Server s : grpcServers) {
                s.shutdownNow().awaitTermination(NettyBench.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            listeners.forEach(NettyBench::close);
            // in reverse: a gRPC server's workers (its connections' rdma_cm ids) before its boss
            for (int i = groups.size() - 1; i >= 0; i--) {
                NettyBench.shutdown(groups.get(i));
            }
        }
    }

    private static EventLoopGroup group(List<EventLoopGroup> groups, Transport t) {
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(1, t.ioHandler());
        groups.add(g);
        return g;
    }

    /**
     * The server of a remote stream: counts and releases what it reads, and writes one byte back each time another
     * {@link NettyDeviceBench#ACK_BYTES} have been read (the client's block ends with it).
     */
    static final class Acknowledge extends ChannelInboundHandlerAdapter {
        private long received;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            long before = received;
            received += b.readableBytes();
            b.release();
            int acks = (int) (received / NettyDeviceBench.ACK_BYTES - before / NettyDeviceBench.ACK_BYTES);
            if (acks > 0) {
                ctx.writeAndFlush(ctx.alloc().buffer(acks).writeZero(acks), ctx.voidPromise());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            System.err.println("server: the stream's connection failed: " + cause);
            ctx.close();
        }
    }

    // ---------------------------------------------------------------- client

    /** A connection of a pattern, as the interleaving uses it. */
    private record Turn(Block setUp, Block block, Block close) {
    }

    private static void measure(InetAddress server, int base, int rounds, int warmup) throws Exception {
        Socket control = connectControl(new InetSocketAddress(server, base + CONTROL));
        try {
            System.out.println("client: the server at " + server.getHostAddress() + " is ready; " + rounds
                    + " rounds measured after " + warmup + " of warm-up");
            int n = NettyDeviceBench.ROUND_TRIPS;
            interleave("echo64: one 64 B round trip, us (lower is better)", n, false, rounds, warmup,
                    turns(server, base, ECHO, (t, a) -> {
                        NettyDeviceBench.Echo e = new NettyDeviceBench.Echo();
                        e.transport = t;
                        e.remote = a;
                        return new Turn(e::setUp, () -> e.roundTrips(n), e::close);
                    }));
            int c = NettyDeviceBench.CHUNKS;
            interleave("stream64k: 64 KiB writes with back-pressure, MiB/s (higher is better)", c, true, rounds,
                    warmup, turns(server, base, STREAM, (t, a) -> {
                        NettyDeviceBench.Stream s = new NettyDeviceBench.Stream();
                        s.transport = t;
                        s.remote = a;
                        return new Turn(s::setUp, () -> s.stream(c), s::close);
                    }));
            interleave("grpc unary64: one unary call of 64 B, us (lower is better)", CALLS, false, rounds, warmup,
                    turns(server, base, GRPC, (t, a) -> {
                        GrpcDeviceBench g = new GrpcDeviceBench();
                        g.transport = t;
                        g.remote = a;
                        return new Turn(g::setUp, () -> calls(g), g::tearDown);
                    }));
        } finally {
            control.close(); // the server ends
        }
    }

    /** A pattern's connections, one per transport, made by {@code make} from the transport and its listener. */
    private static Turn[] turns(InetAddress server, int base, int pattern,
            BiFunction<Transport, InetSocketAddress, Turn> make) {
        Turn[] turns = new Turn[NAMES.length];
        for (Transport t : Transport.values()) {
            turns[t.ordinal()] = make.apply(t, address(server, base, pattern, t));
        }
        return turns;
    }

    private static void calls(GrpcDeviceBench g) {
        for (int i = 0; i < CALLS; i++) {
            byte[] r = g.unary64();
            if (r.length != 64) {
                throw new IllegalStateException("the echo answered " + r.length + " bytes, not 64");
            }
        }
    }

    /** Sets every connection up, measures them interleaved, prints the report, closes them (in reverse). */
    private static void interleave(String title, int opsPerBlock, boolean throughput, int rounds, int warmup,
            Turn[] turns) throws Exception {
        long t0 = System.nanoTime();
        try {
            for (Turn t : turns) {
                t.setUp().run();
            }
            Block[] blocks = Arrays.stream(turns).map(Turn::block).toArray(Block[]::new);
            long[][] ns = NettyInterleaved.measure(rounds, warmup, blocks);
            NettyInterleaved.report(title, NAMES, ns, opsPerBlock, throughput, PAIRS);
        } finally {
            for (int i = turns.length - 1; i >= 0; i--) {
                turns[i].close().run();
            }
        }
        System.out.printf("(%d s with set-up and tear-down)%n", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0));
    }

    private static Socket connectControl(InetSocketAddress control) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONTROL_WAIT_SECONDS);
        while (true) {
            try {
                return new Socket(control.getAddress(), control.getPort());
            } catch (ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(1000);
            }
        }
    }
}
