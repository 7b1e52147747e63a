package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import dev.rdma4j.tools.perf.InstructionMarks;
import dev.rdma4j.tools.perf.JitWatch;
import java.nio.file.Path;

/**
 * rdma4j-netty's 64 B echo against rdma4j's own floor, in guest instructions: the program {@code scripts/perf-compare
 * --icount} runs for its {@code netty echo} case. Both connections of {@link NettyInterleaved}'s echo pattern (the
 * floor, {@link EnginePipeDeviceBench.Echo}: two EVENT-mode engines answering in their completion handlers; and
 * {@code RdmaChannel}, {@link NettyDeviceBench.Echo}: a Netty pipeline over rdma4j-netty) are opened, warmed up in
 * turns (WARMUP round trips of each, then rounds of {@value #ROUND} more while the JIT compiled during either of
 * the last two, for at most WARMUP_SECONDS), then each runs its measured round trips between the marks of
 * {@link InstructionMarks}: first the floor's window, then the channel's, each after a collection of the heap (a
 * young collection in one round's window and not in another's moved their counts). The plugin's two windows
 * divided by the round trips are the case's two figures.
 *
 * <pre>{@code java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.NettyEchoCount MARKS_LIBRARY WARMUP ROUND_TRIPS [WARMUP_SECONDS]}</pre>
 * WARMUP and ROUND_TRIPS are round trips of each connection, in blocks of {@value NettyDeviceBench#ROUND_TRIPS};
 * WARMUP_SECONDS is 20 by default (0: the fixed warm-up only).
 *
 * <p>Threading: the main thread drives both connections, one block at a time; each connection's work runs on its own
 * event loops or engines.
 */
public final class NettyEchoCount {
    /** Round trips of each connection in a warm-up round after the fixed warm-up. */
    static final int ROUND = 512;

    private NettyEchoCount() {
    }

    /**
     * Runs the warm-up and the two measured windows.
     *
     * @param args the marks library, warm-up round trips, measured round trips, and the warm-up's longest seconds
     * @throws Exception if a set-up or a round trip fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: NettyEchoCount MARKS_LIBRARY WARMUP ROUND_TRIPS [WARMUP_SECONDS]");
            System.exit(2);
        }
        long limit = java.util.concurrent.TimeUnit.SECONDS.toNanos(args.length == 4 ? Integer.parseInt(args[3]) : 20);
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
            // then rounds until the JIT (both connections are this JVM's) compiled nothing for two of them
            JitWatch jit = new JitWatch(true);
            jit.compiledSinceLastLook();
            int perRound = Math.max(1, ROUND / block);
            int rounds = 0;
            int quiet = 0;
            while (quiet < 2 && System.nanoTime() - t0 < limit) {
                for (int i = 0; i < perRound; i++) {
                    floor.roundTrips(block);
                    channel.roundTrips(block);
                }
                rounds++;
                quiet = jit.compiledSinceLastLook() ? 0 : quiet + 1;
            }
            System.out.printf("# warm-up: %d round trips of each in %d rounds after %d, %.1f s, %s%n",
                    rounds * perRound * block, rounds, warmupBlocks * block, (System.nanoTime() - t0) / 1e9,
                    quiet >= 2 ? "until the JIT compiled nothing for two rounds"
                            : limit == 0 ? "fixed" : "stopped at WARMUP_SECONDS with the JIT still compiling");
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
        System.gc(); // what the warm-up (or the other window) allocated is not collected inside this window
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
