package dev.rdma4j.tools.perf;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/**
 * The warm-up of {@code rdma4j perf}: rounds of {@code --warmup} iterations, repeated while the JIT compiler of
 * either side is still at work, so that the measurement sees the code a long-running program runs. A fixed
 * count cannot be right everywhere: C2 compiles the loops in well under a second on a host and in tens of
 * seconds on the Soft-RoCE guest's emulated CPUs, where a compile in flight also takes CPU time from the
 * device's kernel work and shows as latency.
 *
 * <p>After each round both sides send one byte over the test's TCP connection: {@code W} (my JIT compiled during
 * one of my last two rounds, and my {@code --warmup-time} is not over), {@code Q} (quiet for two rounds) or
 * {@code L} (still compiling, out of time). Both go on while either sent {@code W}, so both run the same rounds.
 * The JIT counts as at work when the JVM's total compilation time grew, or its compiler threads used CPU time
 * (read from {@code /proc/self/task}: a long compile in flight has not yet added to the total).
 *
 * <p>Not thread-safe: the measuring thread's.
 */
final class Warmup {
    private static final int WANT = 'W';
    private static final int QUIET = 'Q';
    private static final int LIMIT = 'L';

    /**
     * How a warm-up went.
     *
     * @param iterations iterations run
     * @param rounds     rounds run
     * @param nanos      time it took
     * @param settled    ended because neither side's JIT compiled for two rounds
     * @param limited    ended at a side's {@code --warmup-time} with a JIT still compiling ({@code false} after a
     *                   single round that both sides asked for with {@code --warmup-time 0})
     */
    record Result(long iterations, long rounds, long nanos, boolean settled, boolean limited) {
    }

    /** One round of the test's loop. */
    @FunctionalInterface
    interface Round {
        void run() throws PerfException;
    }

    private final BooleanSupplier atWork;

    /** A warm-up that watches this JVM's JIT compiler. */
    Warmup() {
        this.atWork = new JitWatch(true)::compiledSinceLastLook;
    }

    /**
     * A warm-up that asks {@code atWork} (for tests).
     *
     * @param atWork whether the code being warmed up is still changing, asked once before the first round
     *               (the baseline) and after each
     */
    Warmup(BooleanSupplier atWork) {
        this.atWork = atWork;
    }

    /**
     * Runs the rounds.
     *
     * @param round      one round of {@code perRound} iterations
     * @param perRound   iterations in a round
     * @param seconds    the longest this side wants to go on; 0 for one round
     * @param socket     the connection to the peer
     * @return how it went
     * @throws PerfException if a round fails or the peer leaves
     */
    Result run(Round round, long perRound, int seconds, Socket socket) throws PerfException {
        long start = System.nanoTime();
        long limit = seconds * 1_000_000_000L;
        long rounds = 0;
        int quiet = 0;
        atWork.getAsBoolean(); // the baseline
        while (true) {
            round.run();
            rounds++;
            quiet = atWork.getAsBoolean() ? 0 : quiet + 1;
            int mine = quiet >= 2 ? QUIET : System.nanoTime() - start < limit ? WANT : LIMIT;
            int theirs = exchange(socket, mine);
            if (mine != WANT && theirs != WANT) {
                boolean settled = mine == QUIET && theirs == QUIET;
                return new Result(rounds * perRound, rounds, System.nanoTime() - start, settled,
                        !settled && (seconds > 0 || rounds > 1));
            }
        }
    }

    private static int exchange(Socket socket, int mine) throws PerfException {
        return PerfRun.io("the peer left during the warm-up", () -> {
            OutputStream o = socket.getOutputStream();
            o.write(mine);
            o.flush();
            InputStream in = socket.getInputStream();
            int b = in.read();
            if (b != WANT && b != QUIET && b != LIMIT) {
                throw new IOException(b < 0 ? "end of stream" : "the peer sent 0x" + Integer.toHexString(b)
                        + " where a warm-up byte (W, Q or L) was expected");
            }
            return b;
        });
    }

    /**
     * The user and system clock ticks of HotSpot's compiler threads ("C1 CompilerThre", "C2 CompilerThre"),
     * from {@code /proc/self/task/<tid>/stat}; 0 where there is no such file.
     */
    static long compilerThreadTicks() {
        long sum = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended
                }
                sum += compilerTicks(stat);
            }
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
        return sum;
    }

    /**
     * utime + stime of one {@code /proc/.../stat} line if its thread is a compiler thread, else 0.
     *
     * @param stat the line: {@code tid (comm) state ppid ...}, utime and stime the 14th and 15th fields
     * @return the ticks
     */
    static long compilerTicks(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
            return 0;
        }
        String comm = stat.substring(open + 1, close);
        if (!comm.startsWith("C1 Compiler") && !comm.startsWith("C2 Compiler")) {
            return 0;
        }
        String[] f = stat.substring(close + 2).trim().split(" +");
        // f[0] is field 3 (state): utime (14) is f[11], stime (15) f[12]
        if (f.length < 13) {
            return 0;
        }
        try {
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
