package dev.rdma4j.tools.perf;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code --plot}: latency (t_typical) or bandwidth (BW average) against the message size, on a log2 size axis
 * (one step per power of two, labelled 2, 4, ..., 1K, ..., 8M), as a PNG drawn with XChart.
 */
final class PerfPlot {
    private PerfPlot() {
    }

    /**
     * Draws the rows into {@code file}.
     *
     * @param file  the PNG
     * @param title the chart's title
     * @param rows  latency or bandwidth rows, in size order
     * @param gbits bandwidth in Gb/sec
     * @throws IOException if the file cannot be written
     */
    static void write(Path file, String title, List<?> rows, boolean gbits) throws IOException {
        System.setProperty("java.awt.headless", "true");
        boolean latency = !rows.isEmpty() && rows.getFirst() instanceof PerfResults.Latency;
        double[] x = new double[rows.size()];
        double[] y = new double[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            if (rows.get(i) instanceof PerfResults.Latency r) {
                x[i] = log2(r.bytes());
                y[i] = r.typical();
            } else if (rows.get(i) instanceof PerfResults.Bandwidth r) {
                x[i] = log2(r.bytes());
                y[i] = r.average();
            }
        }
        String yTitle = latency ? "t_typical [usec]" : gbits ? "BW average [Gb/sec]" : "BW average [MB/sec]";
        XYChart chart = new XYChartBuilder().width(900).height(540).title(title).xAxisTitle("message size [bytes]")
                .yAxisTitle(yTitle).build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesVisible(true);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("#,##0.##");
        chart.getStyler().setxAxisTickLabelsFormattingFunction(PerfPlot::sizeLabel);
        if (x.length > 0) {
            chart.getStyler().setXAxisMin(Math.floor(x[0]));
            chart.getStyler().setXAxisMax(Math.max(Math.ceil(x[x.length - 1]), Math.floor(x[0]) + 1));
        }
        XYSeries s = chart.addSeries(latency ? "t_typical" : "BW average", x, y);
        s.setMarker(SeriesMarkers.CIRCLE);
        s.setLineColor(new Color(0x1f77b4));
        s.setMarkerColor(new Color(0x1f77b4));
        s.setLineStyle(new BasicStroke(2f));
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    static double log2(long v) {
        return Math.log(v) / Math.log(2);
    }

    /**
     * A tick of the log2 axis: the size 2^v with a binary suffix, or nothing between powers of two.
     *
     * @param v the exponent
     * @return e.g. "64", "4K", "8M"
     */
    static String sizeLabel(Double v) {
        long k = Math.round(v);
        if (Math.abs(v - k) > 1e-6 || k < 0 || k > 62) {
            return "";
        }
        long size = 1L << k;
        return size >= 1 << 30 && size % (1 << 30) == 0 ? size / (1 << 30) + "G"
                : size >= 1 << 20 && size % (1 << 20) == 0 ? size / (1 << 20) + "M"
                : size >= 1 << 10 && size % (1 << 10) == 0 ? size / (1 << 10) + "K" : Long.toString(size);
    }
}
