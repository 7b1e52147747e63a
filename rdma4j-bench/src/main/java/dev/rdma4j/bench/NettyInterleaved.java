package dev.rdma4j.bench;

import dev.rdma4j.bench.NettyBench.Transport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The ratios of {@link NettyDeviceBench} and {@link EnginePipeDeviceBench} measured interleaved, for a machine whose
 * load drifts (the Soft-RoCE guest on shared cores): JMH runs each benchmark's iterations back to back, a minute or
 * more apart from the one it is compared with, so a change in the host's load between them shows up as a ratio. Here
 * the three connections of a pattern (rdma4j's engine alone, {@code RdmaChannel}, epoll TCP) are open at once and
 * take turns: one block each ({@value NettyDeviceBench#ROUND_TRIPS} echo round trips, or {@value
 * NettyDeviceBench#CHUNKS} 64 KiB writes), the order rotating every round; the first rounds are warm-up. Printed:
 * each one's median block (per round trip, or MiB/s) and the median of the per-round ratios, which a drift common to
 * a round cancels out of.
 *
 * <pre>{@code java --enable-native-access=ALL-UNNAMED -cp rdma4j-bench.jar dev.rdma4j.bench.NettyInterleaved [ROUNDS [WARMUP]]}</pre>
 * Not a JMH benchmark (nothing here is blackholed or forked), a complement to them: same state classes, same code
 * paths.
 */
public final class NettyInterleaved {
    private NettyInterleaved() {
    }

    /** One turn of a connection in a round: a block of operations. */
    interface Block {
        /**
         * Runs the block.
         *
         * @throws Exception if an operation fails
         */
        void run() throws Exception;
    }

    /** The ratios printed for {@link #main}'s three connections: rdma / floor, tcp / floor, rdma / tcp. */
    private static final int[][] PAIRS = {{1, 0}, {2, 0}, {1, 2}};

    /**
     * Runs both patterns.
     *
     * @param args rounds measured (default 40), warm-up rounds (default 20)
     * @throws Exception if a set-up or a block fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        String[] names = {"floor", "rdma", "tcp"};

        EnginePipeDeviceBench.Echo floorEcho = new EnginePipeDeviceBench.Echo();
        NettyDeviceBench.Echo rdmaEcho = new NettyDeviceBench.Echo();
        NettyDeviceBench.Echo tcpEcho = new NettyDeviceBench.Echo();
        rdmaEcho.transport = Transport.rdma;
        tcpEcho.transport = Transport.tcp;
        try {
            floorEcho.setUp();
            rdmaEcho.setUp();
            tcpEcho.setUp();
            int n = NettyDeviceBench.ROUND_TRIPS;
            long[][] ns = measure(rounds, warmup, new Block[] {() -> floorEcho.roundTrips(n),
                () -> rdmaEcho.roundTrips(n), () -> tcpEcho.roundTrips(n)});
            report("echo64: one 64 B round trip, us (lower is better)", names, ns, n, false, PAIRS);
        } finally {
            tcpEcho.close();
            rdmaEcho.close();
            floorEcho.close();
        }

        EnginePipeDeviceBench.Stream floorStream = new EnginePipeDeviceBench.Stream();
        NettyDeviceBench.Stream rdmaStream = new NettyDeviceBench.Stream();
        NettyDeviceBench.Stream tcpStream = new NettyDeviceBench.Stream();
        rdmaStream.transport = Transport.rdma;
        tcpStream.transport = Transport.tcp;
        try {
            floorStream.setUp();
            rdmaStream.setUp();
            tcpStream.setUp();
            int c = NettyDeviceBench.CHUNKS;
            long[][] ns = measure(rounds, warmup, new Block[] {() -> floorStream.stream(c), () -> rdmaStream.stream(c),
                () -> tcpStream.stream(c)});
            report("stream64k: 64 KiB writes with back-pressure, MiB/s (higher is better)", names, ns, c, true,
                    PAIRS);
        } finally {
            tcpStream.close();
            rdmaStream.close();
            floorStream.close();
        }
    }

    /**
     * Each block's time per round, {@code [block][round]}; the order rotates with the round.
     *
     * @param rounds rounds measured
     * @param warmup rounds run first and not measured
     * @param blocks the connections' turns
     */
    static long[][] measure(int rounds, int warmup, Block[] blocks) throws Exception {
        int k = blocks.length;
        long[][] ns = new long[k][rounds];
        for (int r = -warmup; r < rounds; r++) {
            for (int j = 0; j < k; j++) {
                int b = Math.floorMod(r + j, k);
                long t0 = System.nanoTime();
                blocks[b].run();
                long t = System.nanoTime() - t0;
                if (r >= 0) {
                    ns[b][r] = t;
                }
            }
        }
        return ns;
    }

    /**
     * Prints each block's median (and quartiles) per operation, or as MiB/s of 64 KiB writes, and the median of the
     * per-round time ratios of {@code pairs}.
     *
     * @param title the pattern
     * @param names the blocks' names
     * @param ns {@link #measure}'s result
     * @param opsPerBlock operations per block
     * @param throughput MiB/s of 64 KiB writes instead of microseconds per operation
     * @param pairs {@code {x, y}}: the ratio time(x) / time(y) of each round
     */
    static void report(String title, String[] names, long[][] ns, int opsPerBlock, boolean throughput,
            int[][] pairs) {
        System.out.println("# " + title + "; " + ns[0].length + " rounds interleaved");
        for (int b = 0; b < names.length; b++) {
            double[] v = new double[ns[b].length];
            for (int r = 0; r < v.length; r++) {
                v[r] = value(ns[b][r], opsPerBlock, throughput);
            }
            Arrays.sort(v);
            System.out.printf(Locale.ROOT, "%-6s median %10.1f   p25 %10.1f   p75 %10.1f%n", names[b], median(v),
                    v[v.length / 4], v[3 * v.length / 4]);
        }
        // per-round ratios: time(x) / time(y), i.e. how many times slower x is than y in that round
        for (int[] p : pairs) {
            List<Double> q = new ArrayList<>();
            for (int r = 0; r < ns[0].length; r++) {
                q.add((double) ns[p[0]][r] / ns[p[1]][r]);
            }
            double[] v = q.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf(Locale.ROOT, "time %s / %s: median %.2fx (p25 %.2fx, p75 %.2fx)%n", names[p[0]],
                    names[p[1]], median(v), v[v.length / 4], v[3 * v.length / 4]);
        }
    }

    private static double value(long blockNanos, int ops, boolean throughput) {
        if (throughput) { // ops writes of 64 KiB = ops / 16 MiB
            return (ops / 16.0) / (blockNanos / 1e9);
        }
        return blockNanos / 1e3 / ops;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
