package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import dev.rdma4j.tools.perf.InstructionMarks;
import java.nio.file.Path;

/**
 * rdma4j-netty's 64 B echo against rdma4j's own floor, in guest instructions: the program {@code scripts/perf-compare
 * --icount} runs for its {@code netty echo} case. Both connections of {@link NettyInterleaved}'s echo pattern (the
 * floor, {@link EnginePipeDeviceBench.Echo}: two EVENT-mode engines answering in their completion handlers; and
 * {@code RdmaChannel}, {@link NettyDeviceBench.Echo}: a Netty pipeline over rdma4j-netty) are opened, warmed up in
 * turns, then each runs its measured round trips between the marks of {@link InstructionMarks}: first the floor's
 * window, then the channel's. The plugin's two windows divided by the round trips are the case's two figures.
 *
 * <pre>{@code java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.NettyEchoCount MARKS_LIBRARY WARMUP ROUND_TRIPS}</pre>
 * WARMUP and ROUND_TRIPS are round trips of each connection, in blocks of {@value NettyDeviceBench#ROUND_TRIPS}.
 *
 * <p>Threading: the main thread drives both connections, one block at a time; each connection's work runs on its own
 * event loops or engines.
 */
public final class NettyEchoCount {
    private NettyEchoCount() {
    }

    /**
     * Runs the warm-up and the two measured windows.
     *
     * @param args the marks library, warm-up round trips, measured round trips
     * @throws Exception if a set-up or a round trip fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: NettyEchoCount MARKS_LIBRARY WARMUP ROUND_TRIPS");
            System.exit(2);
        }
        InstructionMarks marks = InstructionMarks.load(Path.of(args[0]));
        int block = NettyDeviceBench.ROUND_TRIPS;
        int warmupBlocks = Math.max(1, Integer.parseInt(args[1]) / block);
        int blocks = Math.max(1, Integer.parseInt(args[2]) / block);
        EnginePipeDeviceBench.Echo floor = new EnginePipeDeviceBench.Echo();
        NettyDeviceBench.Echo channel = new NettyDeviceBench.Echo();
        channel.transport = Transport.rdma;
        try {
            floor.setUp();
            channel.setUp();
            long t0 = System.nanoTime();
            for (int i = 0; i < warmupBlocks; i++) {
                floor.roundTrips(block);
                channel.roundTrips(block);
            }
            System.out.printf("# warm-up: %d round trips of each in %.1f s%n", warmupBlocks * block,
                    (System.nanoTime() - t0) / 1e9);
            long floorNanos = window(marks, blocks, () -> floor.roundTrips(block));
            long channelNanos = window(marks, blocks, () -> channel.roundTrips(block));
            int n = blocks * block;
            System.out.printf("# floor: %d round trips, %.1f us each%n", n, floorNanos / 1e3 / n);
            System.out.printf("# RdmaChannel: %d round trips, %.1f us each%n", n, channelNanos / 1e3 / n);
        } finally {
            channel.close();
            floor.close();
        }
    }

    private static long window(InstructionMarks marks, int blocks, NettyInterleaved.Block b) throws Exception {
        long t0 = System.nanoTime();
        marks.start();
        try {
            for (int i = 0; i < blocks; i++) {
                b.run();
            }
        } finally {
            marks.stop();
        }
        return System.nanoTime() - t0;
    }
}
