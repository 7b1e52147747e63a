package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.RemoteRegion;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The statistics, perftest's table format, the JSON and the plot of {@code rdma4j perf}. */
class PerfReportTest {
    @TempDir
    Path dir;

    private static PerfParameters parse(String... args) {
        PerfCommand cmd = new PerfCommand();
        new CommandLine(cmd).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
        return cmd.parameters();
    }

    @Test
    void headersAreThoseOfPerftest() {
        assertThat(PerfReport.header(parse("send_lat"))).isEqualTo(" #bytes #iterations    t_min[usec]    "
                + "t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   "
                + "99.9% percentile[usec] ");
        assertThat(PerfReport.header(parse("write_bw"))).isEqualTo(
                " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]");
        assertThat(PerfReport.header(parse("write_bw", "--report_gbits"))).isEqualTo(
                " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]");
        assertThat(PerfReport.header(parse("read_lat", "-D", "2"))).isEqualTo(
                " #bytes        #iterations       t_avg[usec]    tps average");
    }

    @Test
    void latencyStatisticsComeFromTheHistogramHalvedForPingPongs() {
        Histogram h = PerfResults.histogram();
        for (int i = 1; i <= 1000; i++) {
            h.recordValue(i * 1000L); // 1..1000 usec round trips
        }
        PerfResults.Latency pingPong = PerfResults.latency(h, 2, 64, 1001, 2_000_000_000L);
        assertThat(pingPong.min()).isCloseTo(0.5, within(0.001));
        assertThat(pingPong.max()).isCloseTo(500, within(0.5));
        assertThat(pingPong.typical()).isCloseTo(250, within(0.5));
        assertThat(pingPong.avg()).isCloseTo(250.25, within(0.5));
        assertThat(pingPong.p99()).isCloseTo(495, within(0.5));
        assertThat(pingPong.p999()).isCloseTo(499.5, within(0.5));
        assertThat(pingPong.stdev()).isCloseTo(144.3, within(0.5));
        assertThat(pingPong.tps()).isCloseTo(500.5, within(0.01));
        PerfResults.Latency read = PerfResults.latency(h, 1, 64, 1001, 0);
        assertThat(read.typical()).isCloseTo(500, within(1.0));
        assertThat(read.min()).isLessThanOrEqualTo(read.typical()).isLessThanOrEqualTo(read.max());
    }

    @Test
    void latencyRowFollowsPerftestsFormat() {
        String row = PerfReport.row(new PerfResults.Latency(2, 1000, 1.5, 20.25, 2.0, 2.5, 0.75, 9.0, 19.0, 0), false);
        assertThat(row).isEqualTo(" 2       1000          1.50           20.25        2.00     \t       2.50        "
                + "\t0.75   \t\t9.00    \t\t19.00  ");
        assertThat(row.trim().split("\\s+")).containsExactly("2", "1000", "1.50", "20.25", "2.00", "2.50", "0.75",
                "9.00", "19.00");
        assertThat(PerfReport.row(new PerfResults.Latency(8, 500, 0, 0, 0, 3.25, 0, 0, 0, 1234.5), true).trim()
                .split("\\s+")).containsExactly("8", "500", "3.25", "1234.50");
    }

    @Test
    void bandwidthAverageCountsPayloadBytesOverFirstPostToLastCompletion() {
        int n = 1000;
        long[] posted = new long[n];
        long[] completed = new long[n];
        for (int i = 0; i < n; i++) {
            posted[i] = i * 1000L;            // one post per usec
            completed[i] = i * 1000L + 5000;  // done 5 usec later
        }
        long elapsed = completed[n - 1] - posted[0];
        PerfResults.Bandwidth bw = PerfResults.bandwidth(posted, completed, n, 100, 1 << 20, elapsed, false);
        assertThat(bw.iterations()).isEqualTo(n);
        assertThat(bw.average()).isCloseTo(n / (elapsed / 1e9), within(0.01)); // 1 MiB messages: MB/sec = msg/sec
        assertThat(bw.msgRate()).isCloseTo(n / (elapsed / 1e9) / 1e6, within(1e-9));
        assertThat(bw.peak()).isGreaterThanOrEqualTo(bw.average() * 0.999999);
        assertThat(bw.peak()).isCloseTo(1e9 / 1004, within(1.0)); // best window: all 1000 in 1004 usec
        PerfResults.Bandwidth gbits = PerfResults.bandwidth(posted, completed, n, 100, 1 << 20, elapsed, true);
        assertThat(gbits.average()).isCloseTo(bw.average() * (1 << 20) * 8 / 1e9, within(1e-6));
        PerfResults.Bandwidth noPeak = PerfResults.bandwidth(null, null, n, 100, 1 << 20, elapsed, false);
        assertThat(noPeak.peak()).isZero();
    }

    @Test
    void bandwidthRowFollowsPerftestsFormat() {
        String row = PerfReport.row(new PerfResults.Bandwidth(65536, 5000, 1234.5678, 1000.1, 0.016));
        assertThat(row).isEqualTo(" 65536      5000             1234.57            1000.10\t\t   0.016000");
        assertThat(row.trim().split("\\s+")).containsExactly("65536", "5000", "1234.57", "1000.10", "0.016000");
    }

    @Test
    void bannerAddressesAndWarmup() {
        PerfParameters p = parse("write_bw", "-x", "1");
        List<String> banner = PerfReport.banner(p, new PerfReport.Setup("rxe0", "Ethernet", 1024, 0));
        assertThat(banner.getFirst()).isEqualTo(PerfReport.LINE);
        assertThat(banner.get(1).trim()).isEqualTo("RDMA_Write BW Test");
        assertThat(banner).contains(" Device          : rxe0", " TX depth        : 128", " CQ Moderation   : 100",
                " Mtu             : 1024[B]", " Link type       : Ethernet", " GID index       : 1",
                " Max inline data : 0[B]", " Completions     : busy polling the CQ");
        assertThat(banner.getLast()).isEqualTo(PerfReport.LINE);
        assertThat(PerfReport.address(true, new QpEndpoint(0, 0x11, 0x123456, Gid.ZERO),
                new RemoteRegion(0x7f0000001000L, 4096, 0x1234)).getFirst()).isEqualTo(
                " local address: LID 0x0000 QPN 0x000011 PSN 0x123456 RKey 0x00001234 VAddr 0x00007f0000001000");
        assertThat(PerfReport.warmup(new Warmup.Result(7000, 7, 2_340_000_000L, true, false), 2)).isEqualTo(
                "# warm-up: 7000 iterations of 2 bytes in 7 rounds, 2.3 s, until neither side's JIT compiled for two"
                        + " rounds; not counted");
        assertThat(PerfReport.warmup(new Warmup.Result(1000, 1, 100_000_000L, false, false), 2)).isEqualTo(
                "# warm-up: 1000 iterations of 2 bytes in 1 rounds, 0.1 s, one round; not counted");
        assertThat(PerfReport.warmup(new Warmup.Result(90000, 90, 60_000_000_000L, false, true), 64)).contains(
                "stopped at --warmup-time with a JIT still compiling");
    }

    @Test
    void aClockThatCostsASystemCallIsReported() throws java.io.IOException {
        assertThat(PerfReport.clockWarning("hpet")).startsWith("# clock: hpet: each System.nanoTime is a system call")
                .contains("tsc=reliable");
        assertThat(PerfReport.clockWarning("acpi_pm")).startsWith("# clock: acpi_pm: ");
        assertThat(PerfReport.clockWarning("tsc")).isNull();
        assertThat(PerfReport.clockWarning("kvm-clock")).isNull();
        assertThat(PerfReport.clockWarning(null)).isNull();
        Path file = dir.resolve("current_clocksource");
        java.nio.file.Files.writeString(file, "hpet\n");
        assertThat(PerfReport.clockSource(file)).isEqualTo("hpet");
        assertThat(PerfReport.clockSource(dir.resolve("absent"))).isNull();
    }

    @Test
    void jsonHoldsTheParametersAndRows() {
        PerfParameters p = parse("send_lat", "-e", "srv");
        String json = PerfReport.json(p, new PerfReport.Setup("rxe0", "Ethernet", 1024, 236),
                List.of(new PerfResults.Latency(2, 1000, 1.5, 20.25, 2.0, 2.5, 0.75, 9.0, 19.0, 400000)));
        assertThat(json).startsWith("{\n").endsWith("}\n").contains("\"test\": \"send_lat\"", "\"side\": \"client\"",
                "\"completions\": \"CompletionEngine EVENT (the loop runs in its completion handler)\"", "\"MsgSize\": 2", "\"t_typical\": 2.000",
                "\"percentile_99.9\": 19.000", "\"warmup\": 1000", "\"warmup_time\": 120");
        String bw = PerfReport.json(parse("write_bw", "--report_gbits"), new PerfReport.Setup("rxe0", "IB", 4096, 0),
                List.of(new PerfResults.Bandwidth(65536, 5000, 12.5, 10.25, 0.02)));
        assertThat(bw).contains("\"bw_unit\": \"Gb/sec\"", "\"BW_average\": 10.250", "\"side\": \"server\"");
    }

    @Test
    void plotIsAReadablePng() throws Exception {
        Path png = dir.resolve("sub/bw.png");
        List<PerfResults.Bandwidth> rows = PerfParameters.allSizes(1 << 23).stream()
                .map(s -> new PerfResults.Bandwidth(s, 5000, s / 1000.0, s / 2000.0, 0.01)).toList();
        PerfPlot.write(png, "write_bw", rows, false);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img).isNotNull();
        assertThat(img.getWidth()).isEqualTo(900);
        assertThat(img.getHeight()).isEqualTo(540);
        Path lat = dir.resolve("lat.png");
        PerfPlot.write(lat, "send_lat", List.of(new PerfResults.Latency(2, 1000, 1, 3, 2, 2, 0.1, 2.9, 3, 0)), false);
        assertThat(ImageIO.read(lat.toFile())).isNotNull();
    }

    @Test
    void sizeAxisIsLabelledInPowersOfTwo() {
        assertThat(PerfPlot.sizeLabel(1.0)).isEqualTo("2");
        assertThat(PerfPlot.sizeLabel(10.0)).isEqualTo("1K");
        assertThat(PerfPlot.sizeLabel(23.0)).isEqualTo("8M");
        assertThat(PerfPlot.sizeLabel(12.5)).isEmpty();
        assertThat(PerfPlot.log2(1L << 23)).isCloseTo(23, within(1e-9));
    }
}
