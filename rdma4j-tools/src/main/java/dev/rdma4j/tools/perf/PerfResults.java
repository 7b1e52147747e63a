package dev.rdma4j.tools.perf;

import org.HdrHistogram.Histogram;

/** The numbers of one row of {@code rdma4j perf}'s table, and how they are computed from the measurements. */
public final class PerfResults {
    /** perftest's MB: 2^20 bytes. */
    static final double MB = 1 << 20;
    /** perftest's Gb/sec divisor: bytes per gigabit. */
    static final double GBIT_BYTES = 125_000_000;
    /** Above this many messages per size, bandwidth tests do not keep per-message timestamps (no BW peak). */
    static final long MAX_TIMESTAMPS = 10_000_000;
    /** The most window evaluations the BW peak search does; beyond, it starts windows at a stride. */
    private static final long PEAK_WORK = 50_000_000;

    private PerfResults() {
    }

    /**
     * One latency row, in microseconds.
     *
     * @param bytes      the message size
     * @param iterations iterations run (measured)
     * @param min        t_min
     * @param max        t_max
     * @param typical    t_typical: the median, as perftest
     * @param avg        t_avg
     * @param stdev      t_stdev
     * @param p99        99% percentile
     * @param p999       99.9% percentile
     * @param tps        transactions per second (the duration table's "tps average")
     */
    public record Latency(long bytes, long iterations, double min, double max, double typical, double avg,
            double stdev, double p99, double p999, double tps) {
    }

    /**
     * One bandwidth row.
     *
     * @param bytes      the message size
     * @param iterations messages counted (all QPs)
     * @param peak       BW peak, MB/sec or Gb/sec (0 when not computed, as perftest's)
     * @param average    BW average, MB/sec or Gb/sec
     * @param msgRate    messages per second, in millions
     */
    public record Bandwidth(long bytes, long iterations, double peak, double average, double msgRate) {
    }

    /**
     * A histogram for intervals in nanoseconds: 1 ns to an hour, 3 significant digits.
     *
     * @return the histogram
     */
    static Histogram histogram() {
        return new Histogram(1, 3_600_000_000_000L, 3);
    }

    /**
     * The latency row from a histogram of measured intervals, as perftest's {@code print_report_lat}: each
     * interval is divided by the test's round-trip factor, t_typical is the median.
     *
     * @param h          intervals in nanoseconds
     * @param rttFactor  2 for ping-pongs, 1 for reads and atomics
     * @param bytes      the message size
     * @param iterations the iterations run
     * @param elapsedNs  the measured time (for tps)
     * @return the row
     */
    public static Latency latency(Histogram h, int rttFactor, long bytes, long iterations, long elapsedNs) {
        double u = 1000.0 * rttFactor; // ns of an interval -> usec of latency
        double tps = elapsedNs > 0 ? iterations / (elapsedNs / 1e9) : 0;
        return new Latency(bytes, iterations, h.getMinValue() / u, h.getMaxValue() / u,
                h.getValueAtPercentile(50) / u, h.getMean() / u, h.getStdDeviation() / u,
                h.getValueAtPercentile(99) / u, h.getValueAtPercentile(99.9) / u, tps);
    }

    /**
     * The bandwidth row of {@code n} messages as perftest's {@code print_report_bw}: the average over the
     * time from the first post to the last completion; the peak is the best rate over any run of messages
     * from a post {@code i} to a signaled completion {@code j >= i} (every {@code cqMod}-th, and the last).
     *
     * @param posted    post time of message i (ns), or {@code null} for no peak
     * @param completed completion time of message j (ns), set at the signaled ones and the last
     * @param n         messages
     * @param cqMod     every cqMod-th message is signaled
     * @param bytes     the message size
     * @param elapsedNs first post to last completion
     * @param gbits     Gb/sec instead of MB/sec
     * @return the row
     */
    public static Bandwidth bandwidth(long[] posted, long[] completed, long n, int cqMod, long bytes, long elapsedNs,
            boolean gbits) {
        double unit = gbits ? GBIT_BYTES : MB;
        double seconds = elapsedNs / 1e9;
        double avg = seconds > 0 ? bytes * (double) n / seconds / unit : 0;
        double rate = seconds > 0 ? n / seconds / 1e6 : 0;
        double peak = 0;
        if (posted != null && n > 0) {
            long best = bestPerMessageNs(posted, completed, (int) n, cqMod);
            peak = best > 0 ? bytes / (best / 1e9) / unit : 0;
        }
        return new Bandwidth(bytes, n, peak, avg, rate);
    }

    /** The least (completed[j] - posted[i]) / (j - i + 1) over signaled j >= i, in ns (at least 1). */
    static long bestPerMessageNs(long[] posted, long[] completed, int n, int cqMod) {
        long windows = (long) n * (n / cqMod + 1);
        int stride = (int) Math.max(1, windows / PEAK_WORK);
        long best = Long.MAX_VALUE;
        for (int i = 0; i < n; i += stride) {
            for (int j = (i / cqMod + 1) * cqMod - 1; j < n; j += cqMod) {
                best = Math.min(best, (completed[j] - posted[i]) / (j - i + 1));
            }
            if (n % cqMod != 0) {
                best = Math.min(best, (completed[n - 1] - posted[i]) / (n - i));
            }
        }
        return Math.max(1, best);
    }
}
