package dev.rdma4j.tools.perf;

import dev.rdma4j.QpEndpoint;
import dev.rdma4j.RemoteRegion;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code rdma4j perf}'s output in perftest's format: a short banner, the address lines, the table's header and
 * rows (perftest's column headers and row formats), and the JSON of {@code --json}.
 */
public final class PerfReport {
    /** perftest's separator line. */
    public static final String LINE = "-".repeat(87);
    /** perftest's latency header ({@code RESULT_FMT_LAT}). */
    public static final String LATENCY_HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
            + "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    /** perftest's latency header of a {@code -D} run ({@code RESULT_FMT_LAT_DUR}). */
    public static final String LATENCY_DURATION_HEADER = " #bytes        #iterations       t_avg[usec]    tps average";
    /** perftest's bandwidth header ({@code RESULT_FMT}). */
    public static final String BANDWIDTH_HEADER = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]"
            + "   MsgRate[Mpps]";
    /** perftest's bandwidth header with {@code --report_gbits} ({@code RESULT_FMT_G}). */
    public static final String BANDWIDTH_GBITS_HEADER = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]"
            + "   MsgRate[Mpps]";

    private PerfReport() {
    }

    /**
     * What the banner tells about the device and the QPs.
     *
     * @param device    the device's name
     * @param linkType  "Ethernet" or "IB"
     * @param mtu       the path MTU in bytes
     * @param inline    the inline size the QP granted
     */
    public record Setup(String device, String linkType, int mtu, int inline) {
    }

    /**
     * The banner: perftest's lines that apply, kept short.
     *
     * @param p the parameters
     * @param s the set-up
     * @return the lines
     */
    public static List<String> banner(PerfParameters p, Setup s) {
        List<String> l = new ArrayList<>();
        l.add(LINE);
        String title = p.test().title(p.atomic());
        l.add(" ".repeat(Math.max(0, (LINE.length() - title.length()) / 2)) + title);
        l.add(f(" Device          : %s", s.device()));
        l.add(f(" Number of qps   : %d\t\tTransport type : IB", p.qps()));
        l.add(" Connection type : RC\t\tUsing SRQ      : OFF");
        l.add(f(" TX depth        : %d", p.txDepth()));
        if (p.test().verb() == PerfKind.Verb.SEND) {
            l.add(f(" RX depth        : %d", p.rxDepth()));
        }
        if (!p.test().isLatency()) {
            l.add(f(" CQ Moderation   : %d", p.cqMod()));
        }
        l.add(f(" Mtu             : %d[B]", s.mtu()));
        l.add(f(" Link type       : %s", s.linkType()));
        if (p.gidIndex() >= 0) {
            l.add(f(" GID index       : %d", p.gidIndex()));
        }
        l.add(f(" Max inline data : %d[B]", s.inline()));
        l.add(" Data ex. method : Ethernet (rdma4j EndpointExchange)");
        l.add(f(" Completions     : %s", p.completionMode()));
        l.add(LINE);
        return l;
    }

    /**
     * An address line, as perftest prints it for each QP (with the region's rkey and address).
     *
     * @param local  whether it is this side's
     * @param e      the endpoint
     * @param region the region offered
     * @return the line and the GID line
     */
    public static List<String> address(boolean local, QpEndpoint e, RemoteRegion region) {
        return List.of(f(" %s address: LID %#06x QPN %#08x PSN %#08x RKey %#010x VAddr %#018x",
                local ? "local" : "remote", e.lid(), e.qpn(), e.psn(), region.rkey(), region.address()),
                " GID: " + e.gid());
    }

    /**
     * The warm-up line.
     *
     * @param w     how the warm-up went
     * @param bytes its message size
     * @return the line
     */
    static String warmup(Warmup.Result w, long bytes) {
        return f("# warm-up: %d iterations of %d bytes in %d rounds, %.1f s, %s; not counted", w.iterations(), bytes,
                w.rounds(), w.nanos() / 1e9, w.settled() ? "until neither side's JIT compiled for two rounds"
                        : w.limited() ? "stopped at --warmup-time with a JIT still compiling" : "one round");
    }

    /** Where Linux names the clock behind {@code clock_gettime}, and so behind {@code System.nanoTime}. */
    static final java.nio.file.Path CLOCK_SOURCE =
            java.nio.file.Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    /** Clock sources that {@code clock_gettime} cannot read in user space: each read is a system call. */
    private static final java.util.Set<String> SLOW_CLOCKS = java.util.Set.of("hpet", "acpi_pm", "pit", "jiffies",
            "refined-jiffies");

    /**
     * The kernel's clock source.
     *
     * @param file where to read it ({@link #CLOCK_SOURCE})
     * @return its name, or {@code null} where the file cannot be read (not Linux)
     */
    static String clockSource(java.nio.file.Path file) {
        try {
            return java.nio.file.Files.readString(file).strip();
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * A warning when the clock is one that makes every {@code System.nanoTime} a system call: the loops read the
     * clock once an iteration, as perftest does, but perftest reads the CPU's cycle counter itself, so latencies
     * would include the difference. Virtual machines whose kernel marked the TSC unstable fall back to the HPET.
     *
     * @param source the clock source's name, or {@code null}
     * @return the line, or {@code null} when the clock is fast or unknown
     */
    static String clockWarning(String source) {
        if (source == null || !SLOW_CLOCKS.contains(source)) {
            return null;
        }
        return "# clock: " + source + ": each System.nanoTime is a system call here (perftest reads the CPU's cycle"
                + " counter instead), and every figure below includes it; a virtual machine that marked its TSC"
                + " unstable keeps it with the kernel parameter tsc=reliable";
    }

    /**
     * The table header for a test.
     *
     * @param p the parameters
     * @return the header line
     */
    public static String header(PerfParameters p) {
        if (p.test().isLatency()) {
            return p.duration() > 0 ? LATENCY_DURATION_HEADER : LATENCY_HEADER;
        }
        return p.gbits() ? BANDWIDTH_GBITS_HEADER : BANDWIDTH_HEADER;
    }

    /**
     * A latency row ({@code REPORT_FMT_LAT}, or {@code REPORT_FMT_LAT_DUR} for a {@code -D} run).
     *
     * @param r        the row
     * @param duration whether it is a {@code -D} run
     * @return the line
     */
    public static String row(PerfResults.Latency r, boolean duration) {
        if (duration) {
            return f(" %-7d       %d            %-7.2f        %-7.2f", r.bytes(), r.iterations(), r.avg(), r.tps());
        }
        return f(" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f",
                r.bytes(), r.iterations(), r.min(), r.max(), r.typical(), r.avg(), r.stdev(), r.p99(), r.p999());
    }

    /**
     * A bandwidth row ({@code REPORT_FMT}).
     *
     * @param r the row
     * @return the line
     */
    public static String row(PerfResults.Bandwidth r) {
        return f(" %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f", r.bytes(), r.iterations(), r.peak(),
                r.average(), r.msgRate());
    }

    /**
     * The results as JSON: the test's parameters and one object per row.
     *
     * @param p    the parameters
     * @param s    the set-up
     * @param rows {@link PerfResults.Latency} or {@link PerfResults.Bandwidth} rows
     * @return the document
     */
    public static String json(PerfParameters p, Setup s, List<?> rows) {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"test\": \"").append(p.test().cliName()).append("\",\n");
        b.append("  \"side\": \"").append(p.isClient() ? "client" : "server").append("\",\n");
        b.append("  \"device\": \"").append(escape(s.device())).append("\",\n");
        if (p.test().verb() == PerfKind.Verb.ATOMIC) {
            b.append("  \"atomic\": \"").append(p.atomic()).append("\",\n");
        }
        b.append(f("  \"qps\": %d,\n  \"tx_depth\": %d,\n  \"inline\": %d,\n  \"mtu\": %d,\n", p.qps(), p.txDepth(),
                s.inline(), s.mtu()));
        b.append(f("  \"iterations\": %d,\n  \"duration\": %d,\n  \"warmup\": %d,\n  \"warmup_time\": %d,\n",
                p.iterations(), p.duration(), p.warmup(), p.warmupSeconds()));
        b.append("  \"completions\": \"").append(p.completionMode()).append("\",\n");
        if (!p.test().isLatency()) {
            b.append("  \"bw_unit\": \"").append(p.gbits() ? "Gb/sec" : "MB/sec").append("\",\n");
        }
        b.append("  \"results\": [");
        for (int i = 0; i < rows.size(); i++) {
            b.append(i == 0 ? "\n" : ",\n");
            if (rows.get(i) instanceof PerfResults.Latency r) {
                b.append(f("    {\"MsgSize\": %d, \"n_iterations\": %d, \"t_min\": %.3f, \"t_max\": %.3f, "
                        + "\"t_typical\": %.3f, \"t_avg\": %.3f, \"t_stdev\": %.3f, \"percentile_99\": %.3f, "
                        + "\"percentile_99.9\": %.3f, \"tps\": %.1f}", r.bytes(), r.iterations(), r.min(), r.max(),
                        r.typical(), r.avg(), r.stdev(), r.p99(), r.p999(), r.tps()));
            } else if (rows.get(i) instanceof PerfResults.Bandwidth r) {
                b.append(f("    {\"MsgSize\": %d, \"n_iterations\": %d, \"BW_peak\": %.3f, \"BW_average\": %.3f, "
                        + "\"MsgRate\": %.6f}", r.bytes(), r.iterations(), r.peak(), r.average(), r.msgRate()));
            } else {
                throw new IllegalArgumentException("not a row: " + rows.get(i));
            }
        }
        b.append(rows.isEmpty() ? "]\n}\n" : "\n  ]\n}\n");
        return b.toString();
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
