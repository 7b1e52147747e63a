package dev.rdma4j.tools;

import static dev.rdma4j.tools.ToolRuns.awaitListening;
import static dev.rdma4j.tools.ToolRuns.finish;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.rdma4j.tools.ToolRuns.Run;
import dev.rdma4j.tools.perf.PerfReport;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j perf}: server and client of each kind of test in this JVM on the device, with few iterations;
 * the printed tables are parsed and checked for sane values (latencies ordered and positive, bandwidth above
 * zero, one row per size).
 */
@Tag("device")
class PerfDeviceTest {
    @TempDir
    Path dir;

    @Test
    void sendLatencyBothSidesReport() throws Exception {
        List<Run> runs = pair(18701, "send_lat", "-n", "200", "--warmup", "200", "--warmup-time", "60");
        List<String> warmups = new ArrayList<>();
        for (Run r : runs) {
            String line = r.out().stream().filter(l -> l.startsWith("# warm-up: ")).findFirst().orElseThrow();
            Matcher m = Pattern.compile(
                    "# warm-up: (\\d+) iterations of 2 bytes in (\\d+) rounds, [0-9.]+ s, (until neither side's JIT "
                            + "compiled for two rounds|stopped at --warmup-time with a JIT still compiling); not counted")
                    .matcher(line);
            assertThat(m.matches()).as("%s", r).isTrue();
            // rounds of 200 until the (shared) JIT was quiet for two rounds: never fewer than two
            assertThat(Long.parseLong(m.group(1))).isEqualTo(200 * Long.parseLong(m.group(2)));
            assertThat(Long.parseLong(m.group(2))).isGreaterThanOrEqualTo(2);
            warmups.add(m.group(1) + "/" + m.group(2));
            assertLatency(r, List.of(2L), 200);
        }
        assertThat(warmups.get(0)).as("both sides ran the same warm-up rounds").isEqualTo(warmups.get(1));
    }

    @Test
    void writeLatencyWithTheCompletionEngine() throws Exception {
        List<Run> runs = pair(18702, "write_lat", "-s", "32", "-n", "150", "--warmup", "100", "--warmup-time", "0",
                "-e");
        for (Run r : runs) {
            assertThat(r.out()).as("%s", r).contains(" Completions     : CompletionEngine EVENT");
            assertLatency(r, List.of(32L), 150);
        }
    }

    @Test
    void sendLatencyRunsOnTheEngineThread() throws Exception {
        // -e: the ping-pong runs in the engine's completion handler; -t 1: a reply that arrives before the send's
        // own completion waits for it (the send queue holds one), as in the busy-polling loop
        List<Run> runs = pair(18712, "send_lat", "-s", "64", "-n", "300", "-t", "1", "--warmup", "100",
                "--warmup-time", "0", "-e");
        for (Run r : runs) {
            assertThat(r.out()).as("%s", r)
                    .contains(" Completions     : CompletionEngine EVENT (the loop runs in its completion handler)");
            assertLatency(r, List.of(64L), 300);
        }
        // with -D the engine hands completions to the measuring thread as for the other tests
        runs = pair(18713, "send_lat", "-s", "64", "-D", "2", "--warmup", "50", "--warmup-time", "0", "--mode=busy");
        for (Run r : runs) {
            assertThat(r.out()).as("%s", r).contains(" Completions     : CompletionEngine BUSY_POLL");
            assertThat(rows(r)).as("%s", r).hasSize(1);
            assertThat(rows(r).get(0)[1]).as("#iterations in %s", r).isPositive();
        }
    }

    @Test
    void writeBandwidthClientReports() throws Exception {
        List<Run> runs = pair(18703, "write_bw", "-s", "4096", "-n", "300", "--warmup", "100", "--warmup-time", "0");
        assertBandwidth(runs.get(1), List.of(4096L), 300);
        assertThat(rows(runs.get(0))).as("%s", runs.get(0)).isEmpty(); // the server only exposes its memory
    }

    /** {@code --wr-api}: the sends go through the extended API ({@code ibv_wr_*}), as perftest's bandwidth tests. */
    @Test
    void bandwidthAndLatencyThroughTheWrApi() throws Exception {
        List<Run> write = pair(18730, "write_bw", "-s", "4096", "-n", "300", "--warmup", "100", "--warmup-time", "0",
                "--wr-api");
        assertBandwidth(write.get(1), List.of(4096L), 300);
        List<Run> send = pair(18731, "send_bw", "-q", "2", "-s", "1024", "-n", "200", "-t", "32", "--warmup", "50",
                "--warmup-time", "0", "--wr-api");
        for (Run r : send) {
            assertBandwidth(r, List.of(1024L), 400);
        }
        List<Run> lat = pair(18732, "send_lat", "-s", "64", "-n", "200", "--warmup", "100", "--warmup-time", "0",
                "--wr-api");
        assertLatency(lat.get(1), List.of(64L), 200);
    }

    @Test
    void readLatency() throws Exception {
        List<Run> runs = pair(18704, "read_lat", "-s", "64", "-n", "200", "--warmup", "100", "--warmup-time", "0");
        assertLatency(runs.get(1), List.of(64L), 200);
    }

    @Test
    void atomicLatencyCompareAndSwap() throws Exception {
        List<Run> runs = pair(18705, "atomic_lat", "-A", "CMP_AND_SWAP", "-n", "200", "--warmup", "100", "--warmup-time", "0");
        assertThat(runs.get(1).out()).as("%s", runs.get(1)).anyMatch(l -> l.contains("Atomic CMP_AND_SWAP Latency Test"));
        assertLatency(runs.get(1), List.of(8L), 200);
    }

    @Test
    void atomicLatencyFetchAndAddAdaptive() throws Exception {
        List<Run> runs = pair(18706, "atomic_lat", "-n", "150", "--warmup", "50", "--warmup-time", "0",
                "--mode=adaptive");
        assertLatency(runs.get(1), List.of(8L), 150);
    }

    @Test
    void sendBandwidthOverTwoQpsBothSidesReport() throws Exception {
        List<Run> runs = pair(18707, "send_bw", "-q", "2", "-s", "1024", "-n", "200", "-t", "32", "--warmup", "50",
                "--warmup-time", "0");
        for (Run r : runs) {
            assertBandwidth(r, List.of(1024L), 400);
        }
    }

    @Test
    void writeBandwidthAllSizesWithPlotAndJson() throws Exception {
        Path png = dir.resolve("out.png");
        Path json = dir.resolve("out.json");
        List<Run> runs = pair(18708, "write_bw", "-a", "--max-size", "4096", "-n", "40", "--warmup", "40", "--warmup-time", "0",
                "--plot", png.toString(), "--json", json.toString());
        List<Long> sizes = Stream.iterate(2L, s -> s <= 4096, s -> s * 2).toList();
        assertBandwidth(runs.get(1), sizes, 40);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img).as("a PNG at %s", png).isNotNull();
        assertThat(img.getWidth()).isGreaterThan(100);
        String doc = Files.readString(json);
        assertThat(doc.split("\"MsgSize\"", -1)).hasSize(sizes.size() + 1);
    }

    /**
     * {@code bin/rdma4j perf write_bw -a --plot out.png} on a host without a device: bin/rdma4j boots a guest with
     * {@code RDMA4J_AUTO_GUEST} set, where the lone command runs both sides (the server a child JVM, which must not
     * itself go loopback) and prints the client's table. Run here as a process with that variable, as the guest
     * runs it.
     */
    @Test
    void aloneInTheGuestBinRdma4jBootsBothSidesRun() throws Exception {
        Path png = dir.resolve("alone.png");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "perf", "write_bw",
                "-a", "--max-size", "1024", "-n", "40", "--warmup", "40", "--warmup-time", "0", "-p", "18710",
                "--plot", png.toString()));
        Run r = finish(ToolRuns.process(dir, "perf alone", cmd, java.util.Map.of("RDMA4J_AUTO_GUEST", "1")));
        assertThat(r.status()).as("%s", r).isZero();
        assertThat(r.out()).as("%s", r).contains(
                "# no RDMA device on the host: both sides run in this Soft-RoCE guest (--loopback)");
        assertBandwidth(r, Stream.iterate(2L, s -> s <= 1024, s -> s * 2).toList(), 40);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img).as("a PNG at %s", png).isNotNull();
    }

    @Test
    void loopbackRunsBothSides() throws Exception {
        Run r = finish(ToolRuns.java("loopback", List.of("perf", "read_lat", "--loopback", "-n", "50", "--warmup",
                "20", "--warmup-time", "0", "-p", "18711")));
        assertThat(r.status()).as("%s", r).isZero();
        assertLatency(r, List.of(2L), 50);
    }

    @Test
    void sidesThatDisagreeBothFail() throws Exception {
        List<Run> runs = pair(18709, List.of("send_lat", "-n", "100"), List.of("send_lat", "-n", "200"));
        for (Run r : runs) {
            assertThat(r.status()).as("%s", r).isEqualTo(1);
            assertThat(r.err()).as("%s", r).contains("both sides need the same test and options");
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Runs the server, then the client with the same options; both must succeed. */
    private static List<Run> pair(int port, String... opts) throws Exception {
        List<Run> runs = pair(port, List.of(opts), List.of(opts));
        for (Run r : runs) {
            assertThat(r.status()).as("%s", r).isZero();
            assertThat(r.err()).as("%s", r).isEmpty();
        }
        return runs;
    }

    private static List<Run> pair(int port, List<String> server, List<String> client) throws Exception {
        List<String> s = new ArrayList<>(List.of("perf"));
        s.addAll(server);
        s.addAll(List.of("-p", Integer.toString(port)));
        List<String> c = new ArrayList<>(List.of("perf"));
        c.addAll(client);
        c.addAll(List.of("-p", Integer.toString(port), "127.0.0.1"));
        CompletableFuture<Run> srv = ToolRuns.java("server", s);
        awaitListening(port, srv);
        Run cl = finish(ToolRuns.java("client", c));
        return List.of(finish(srv), cl);
    }

    /** The rows of the table: the lines between the header and the closing line, split into fields. */
    private static List<double[]> rows(Run r) {
        List<String> out = r.out();
        int h = -1;
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).startsWith(" #bytes")) {
                h = i;
            }
        }
        List<double[]> rows = new ArrayList<>();
        if (h < 0) {
            return rows;
        }
        for (int i = h + 1; i < out.size() && !out.get(i).equals(PerfReport.LINE); i++) {
            rows.add(Arrays.stream(out.get(i).trim().split("\\s+")).mapToDouble(Double::parseDouble).toArray());
        }
        return rows;
    }

    private static void assertLatency(Run r, List<Long> sizes, long iterations) {
        assertThat(r.out()).as("%s", r).contains(PerfReport.LATENCY_HEADER);
        List<double[]> rows = rows(r);
        assertThat(rows).as("%s", r).hasSize(sizes.size());
        for (int i = 0; i < rows.size(); i++) {
            double[] f = rows.get(i);
            assertThat(f).as("%s", r).hasSize(9);
            assertThat((long) f[0]).as("#bytes in %s", r).isEqualTo(sizes.get(i));
            assertThat((long) f[1]).as("#iterations in %s", r).isEqualTo(iterations);
            double min = f[2], max = f[3], typical = f[4], avg = f[5], p99 = f[7], p999 = f[8];
            assertThat(min).as("t_min in %s", r).isPositive();
            assertThat(typical).as("t_min <= t_typical <= t_max in %s", r).isBetween(min, max);
            assertThat(avg).as("t_avg in %s", r).isBetween(min, max);
            assertThat(p99).as("99%% in %s", r).isBetween(typical, max);
            assertThat(p999).as("99.9%% in %s", r).isBetween(p99, max);
        }
    }

    private static void assertBandwidth(Run r, List<Long> sizes, long iterations) {
        assertThat(r.out()).as("%s", r).contains(PerfReport.BANDWIDTH_HEADER);
        List<double[]> rows = rows(r);
        assertThat(rows).as("%s", r).hasSize(sizes.size());
        for (int i = 0; i < rows.size(); i++) {
            double[] f = rows.get(i);
            assertThat(f).as("%s", r).hasSize(5);
            assertThat((long) f[0]).as("#bytes in %s", r).isEqualTo(sizes.get(i));
            assertThat((long) f[1]).as("#iterations in %s", r).isEqualTo(iterations);
            assertThat(f[4]).as("MsgRate in %s", r).isPositive();
            // payload bytes: BW average (MB = 2^20 bytes, 2 decimals) = #bytes x MsgRate
            double expected = f[0] * f[4] * 1e6 / (1 << 20);
            assertThat(f[3]).as("BW average in %s", r).isCloseTo(expected, within(0.01 + 0.02 * expected));
        }
        assertThat(rows.getLast()[3]).as("BW average of the largest size in %s", r).isPositive();
    }
}
