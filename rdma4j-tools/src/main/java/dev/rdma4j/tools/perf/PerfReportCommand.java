package dev.rdma4j.tools.perf;

import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/rdma4j perf-report RAW.tsv [--plot FILE.png]}: the table of {@code scripts/perf-compare}. Reads
 * its measurements (case, metric, implementation, round, value), and prints per case and metric the median
 * of each implementation, the ratio rdma4j/C and the target for it; draws the ratios as bars.
 *
 * <p>Not thread-safe (a command object per run).
 */
@Command(name = "perf-report", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "The table of scripts/perf-compare: medians of rdma4j and C per case, their ratio, the target.")
public final class PerfReportCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "RAW", description = "the measurements: case, metric, impl, round, value")
    Path raw;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "draw the ratios as a bar chart")
    Path plot;

    /** One case and metric: both implementations' values, in rounds. */
    record Row(String name, String metric, List<Double> rdma4j, List<Double> c) {
        double ratio() {
            return median(rdma4j) / median(c);
        }

        boolean lowerIsBetter() {
            return !metric.equals("bw_average") && !metric.equals("msg_rate");
        }

        /**
         * The target of the ratio: latency ≤ 1.05 (1.10 in event mode), bandwidth ≥ 0.98, cold ≤ 1.5, the
         * short path's round trip ≤ 1.3 busy and ≤ 1.5 in event mode (issue 30).
         */
        double target() {
            if (name.startsWith("short path")) {
                return name.contains("busy") ? 1.3 : 1.5;
            }
            if (metric.equals("usec_per_iter")) {
                return 1.5;
            }
            if (!lowerIsBetter()) {
                return 0.98;
            }
            return name.contains("-e") ? 1.10 : 1.05;
        }

        boolean met() {
            return lowerIsBetter() ? ratio() <= target() : ratio() >= target();
        }
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static List<Row> read(List<String> lines) {
        Map<String, Row> rows = new LinkedHashMap<>();
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length != 5) {
                throw new IllegalArgumentException("not case, metric, impl, round, value: " + line);
            }
            Row r = rows.computeIfAbsent(f[0] + "\t" + f[1], k -> new Row(f[0], f[1], new ArrayList<>(),
                    new ArrayList<>()));
            double v = Double.parseDouble(f[4]);
            switch (f[2]) {
                case "rdma4j" -> r.rdma4j().add(v);
                case "C" -> r.c().add(v);
                default -> throw new IllegalArgumentException("unknown implementation " + f[2] + ": " + line);
            }
        }
        return new ArrayList<>(rows.values());
    }

    static String table(List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-26s %-15s %6s %14s %14s %9s %8s  %s%n", "case", "metric", "rounds",
                "rdma4j median", "C median", "rdma4j/C", "target", "met"));
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "%-26s %-15s %6d %14.3f %14.3f %9.3f %8s  %s%n", r.name(),
                    unit(r.metric()), Math.min(r.rdma4j().size(), r.c().size()), median(r.rdma4j()), median(r.c()),
                    r.ratio(), (r.lowerIsBetter() ? "<= " : ">= ") + r.target(), r.met() ? "yes" : "NO"));
        }
        long met = rows.stream().filter(Row::met).count();
        b.append(String.format(Locale.ROOT, "%d of %d targets met%n", met, rows.size()));
        return b.toString();
    }

    private static String unit(String metric) {
        return switch (metric) {
            case "t_typical" -> "t_typical[us]";
            case "bw_average" -> "BW avg[MB/s]";
            case "msg_rate" -> "MsgRate[Mpps]";
            case "usec_per_iter" -> "usec/iter";
            default -> metric;
        };
    }

    @Override
    public Integer call() throws IOException {
        List<Row> rows = read(Files.readAllLines(raw));
        System.out.print(table(rows));
        if (plot != null) {
            draw(rows, plot);
            System.out.println("chart: " + plot);
        }
        return 0;
    }

    private static void draw(List<Row> rows, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(560)
                .title("rdma4j / C (median of interleaved runs; latency: lower is better, bandwidth: higher)")
                .xAxisTitle("case").yAxisTitle("rdma4j / C").build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendVisible(true);
        chart.getStyler().setXAxisLabelRotation(35);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        List<String> names = rows.stream().map(r -> r.name() + " " + unit(r.metric())).toList();
        chart.addSeries("rdma4j / C", names, rows.stream().map(Row::ratio).toList());
        chart.addSeries("target", names, rows.stream().map(Row::target).toList());
        chart.getStyler().setSeriesColors(new Color[] {new Color(0x1f77b4), new Color(0xbbbbbb)});
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
