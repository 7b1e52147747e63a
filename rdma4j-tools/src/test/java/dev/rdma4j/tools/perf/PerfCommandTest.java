package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.PollingMode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** {@code rdma4j perf}'s options: perftest's defaults per test, and the combinations it refuses. */
class PerfCommandTest {
    private static PerfParameters parse(String... args) {
        PerfCommand cmd = new PerfCommand();
        new CommandLine(cmd).parseArgs(args); // as ToolRuns: no case-insensitive enums
        return cmd.parameters();
    }

    @Test
    void latencyDefaultsAreThoseOfPerftest() {
        PerfParameters p = parse("send_lat");
        assertThat(p.test()).isEqualTo(PerfKind.SEND_LAT);
        assertThat(p.isClient()).isFalse();
        assertThat(p.sizes()).containsExactly(2L);
        assertThat(p.iterations()).isEqualTo(1000);
        assertThat(p.txDepth()).isEqualTo(1);
        assertThat(p.inline()).isEqualTo(236);
        assertThat(p.tcpPort()).isEqualTo(18515);
        assertThat(p.ibPort()).isEqualTo(1);
        assertThat(p.gidIndex()).isEqualTo(-1);
        assertThat(p.mode()).isNull();
        assertThat(p.warmup()).isEqualTo(PerfCommand.DEFAULT_WARMUP);
        assertThat(p.warmupSeconds()).isEqualTo(PerfCommand.DEFAULT_WARMUP_SECONDS);
        assertThat(parse("send_lat", "--warmup-time", "0").warmupSeconds()).isZero();
        assertThat(p.connectSeconds()).isEqualTo(PerfCommand.DEFAULT_CONNECT_SECONDS);
        assertThat(parse("send_lat", "--connect-timeout", "120").connectSeconds()).isEqualTo(120);
        assertThat(parse("write_lat").inline()).isEqualTo(220);
        assertThat(parse("read_lat").inline()).isZero();
    }

    @Test
    void bandwidthDefaultsAreThoseOfPerftest() {
        PerfParameters p = parse("write_bw", "10.0.0.1");
        assertThat(p.isClient()).isTrue();
        assertThat(p.host()).isEqualTo("10.0.0.1");
        assertThat(p.sizes()).containsExactly(65536L);
        assertThat(p.iterations()).isEqualTo(5000);
        assertThat(p.txDepth()).isEqualTo(128);
        assertThat(p.cqMod()).isEqualTo(100);
        assertThat(p.inline()).isZero();
        assertThat(parse("read_bw", "-t", "16").cqMod()).isEqualTo(16);
    }

    @Test
    void perftestFlags() {
        PerfParameters p = parse("send_bw", "-d", "rxe0", "-i", "2", "-x", "1", "-p", "19000", "-s", "4096", "-n",
                "77", "-q", "4", "-t", "64", "-I", "64", "-F", "--report_gbits", "-r", "256", "--warmup", "0",
                "--json", "r.json", "--plot", "r.png", "server");
        assertThat(p.device()).isEqualTo("rxe0");
        assertThat(p.ibPort()).isEqualTo(2);
        assertThat(p.gidIndex()).isEqualTo(1);
        assertThat(p.tcpPort()).isEqualTo(19000);
        assertThat(p.sizes()).containsExactly(4096L);
        assertThat(p.iterations()).isEqualTo(77);
        assertThat(p.qps()).isEqualTo(4);
        assertThat(p.txDepth()).isEqualTo(64);
        assertThat(p.inline()).isEqualTo(64);
        assertThat(p.rxDepth()).isEqualTo(256);
        assertThat(p.gbits()).isTrue();
        assertThat(p.warmup()).isZero();
        assertThat(p.json()).isEqualTo(Path.of("r.json"));
        assertThat(p.plot()).isEqualTo(Path.of("r.png"));
    }

    @Test
    void allSizesRunFrom2To2Pow23OrTheMaxSize() {
        List<Long> all = parse("write_bw", "-a").sizes();
        assertThat(all).hasSize(23);
        assertThat(all.getFirst()).isEqualTo(2);
        assertThat(all.getLast()).isEqualTo(1L << 23);
        assertThat(parse("write_bw", "-a", "--max-size", "1024").sizes()).containsExactly(2L, 4L, 8L, 16L, 32L, 64L,
                128L, 256L, 512L, 1024L);
    }

    @Test
    void allSizesWithoutIterationsMoveAtMost64MiBPerSize() {
        PerfParameters a = parse("write_bw", "-a");
        assertThat(a.iterationsFor(2)).as("small sizes: perftest's 5000").isEqualTo(5000);
        assertThat(a.iterationsFor(64 << 10)).isEqualTo(1024);
        assertThat(a.iterationsFor(1L << 23)).as("8 MiB: the floor of 100").isEqualTo(100);
        assertThat(parse("write_bw", "-a", "-n", "5000").iterationsFor(1L << 23)).as("-n given: as perftest")
                .isEqualTo(5000);
        assertThat(parse("send_lat", "-a").iterationsFor(1L << 20)).isEqualTo(100);
        assertThat(parse("write_bw", "-s", "8388608").iterationsFor(1L << 23)).as("one size: no budget")
                .isEqualTo(5000);
    }

    @Test
    void eventsAndModes() {
        assertThat(parse("send_lat", "-e").mode()).isEqualTo(PollingMode.EVENT);
        assertThat(parse("send_lat", "--mode=busy").mode()).isEqualTo(PollingMode.BUSY_POLL);
        assertThat(parse("send_lat", "--mode", "adaptive").mode()).isEqualTo(PollingMode.ADAPTIVE);
        assertThat(parse("send_lat", "--mode=event", "-e").mode()).isEqualTo(PollingMode.EVENT);
        assertThatThrownBy(() -> parse("send_lat", "-e", "--mode=busy")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("send_lat", "--warmup-time", "-1")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("--warmup-time");
        assertThatThrownBy(() -> parse("send_lat", "--connect-timeout", "-1")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("--connect-timeout");
        assertThat(parse("send_lat").completionMode()).isEqualTo("busy polling the CQ");
        assertThat(parse("send_lat", "-e").completionMode())
                .isEqualTo("CompletionEngine EVENT (the loop runs in its completion handler)");
        assertThat(parse("send_lat", "-e", "-D", "2").completionMode()).isEqualTo("CompletionEngine EVENT");
        assertThat(parse("write_lat", "--mode=busy").completionMode()).isEqualTo("CompletionEngine BUSY_POLL");
    }

    @Test
    void atomics() {
        PerfParameters p = parse("atomic_lat", "-A", "cmp_and_swap");
        assertThat(p.atomic()).isEqualTo(PerfKind.AtomicOp.CMP_AND_SWAP);
        assertThat(p.sizes()).containsExactly(8L);
        assertThat(parse("atomic_lat").atomic()).isEqualTo(PerfKind.AtomicOp.FETCH_AND_ADD);
        assertThat(parse("atomic_lat", "-a").sizes()).containsExactly(8L);
        assertThat(PerfKind.ATOMIC_LAT.title(PerfKind.AtomicOp.CMP_AND_SWAP)).isEqualTo(
                "Atomic CMP_AND_SWAP Latency Test");
        assertThatThrownBy(() -> parse("atomic_lat", "-s", "16")).isInstanceOf(ParameterException.class);
    }

    @Test
    void durationReplacesIterations() {
        PerfParameters p = parse("write_bw", "-D", "3");
        assertThat(p.duration()).isEqualTo(3);
        assertThat(p.iterations()).isZero();
        assertThatThrownBy(() -> parse("write_bw", "-D", "3", "-a")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("-a");
        assertThatThrownBy(() -> parse("write_bw", "-D", "3", "-n", "5")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-D", "0")).isInstanceOf(ParameterException.class);
    }

    @Test
    void refusals() {
        assertThatThrownBy(() -> parse("write_latency")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("unknown test");
        assertThatThrownBy(() -> parse("send_lat", "-q", "2")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("bandwidth tests");
        assertThatThrownBy(() -> parse("send_lat", "-n", "1")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-s", "0")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-a", "-s", "8")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-a", "--max-size", "16777216"))
                .isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-t", "0")).isInstanceOf(ParameterException.class);
        assertThatThrownBy(() -> parse("write_bw", "-p", "70000")).isInstanceOf(ParameterException.class);
    }

    @Test
    void testNamesAcceptPerftestsSpelling() {
        assertThat(PerfKind.of("ib_write_bw")).isEqualTo(PerfKind.WRITE_BW);
        assertThat(PerfKind.of("READ-LAT")).isEqualTo(PerfKind.READ_LAT);
        assertThat(PerfKind.WRITE_LAT.rttFactor()).isEqualTo(2);
        assertThat(PerfKind.READ_LAT.rttFactor()).isEqualTo(1);
        assertThat(PerfKind.ATOMIC_LAT.rttFactor()).isEqualTo(1);
        assertThat(PerfKind.SEND_BW.serverReports()).isTrue();
        assertThat(PerfKind.WRITE_BW.serverReports()).isFalse();
    }

    @Test
    void bothSidesAgreeOnWhatDecidesTheTraffic() {
        assertThat(parse("write_bw", "-a", "--max-size", "64").agreement())
                .isEqualTo("write_bw -s 2..64 -n 5000 -D 0 -q 1 -t 128 -r 512 --warmup 1000");
        assertThat(parse("atomic_lat", "-A", "CMP_AND_SWAP", "srv").agreement())
                .isEqualTo("atomic_lat -s 8 -n 1000 -D 0 -q 1 -t 1 -r 512 --warmup 1000 -A CMP_AND_SWAP");
        // local choices need not match
        assertThat(parse("send_lat", "-e", "--json", "x").agreement()).isEqualTo(parse("send_lat", "h").agreement());
    }
}
