package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** scripts/perf-compare's table: medians, ratios, targets. */
class PerfReportCommandTest {
    @Test
    void mediansRatiosAndTargetsPerCaseAndMetric() {
        List<PerfReportCommand.Row> rows = PerfReportCommand.read(List.of(
                "send_lat 64 B\tt_typical\trdma4j\t1\t10", "send_lat 64 B\tt_typical\tC\t1\t9",
                "send_lat 64 B\tt_typical\trdma4j\t2\t30", "send_lat 64 B\tt_typical\tC\t2\t10",
                "send_lat 64 B\tt_typical\trdma4j\t3\t11", "send_lat 64 B\tt_typical\tC\t3\t11",
                "write_bw 64 B\tbw_average\trdma4j\t1\t99", "write_bw 64 B\tbw_average\tC\t1\t100",
                "send_lat -e 64 B\tt_typical\trdma4j\t1\t10.9", "send_lat -e 64 B\tt_typical\tC\t1\t10",
                "rc_pingpong 64 B (cold)\tusec_per_iter\trdma4j\t1\t140", "rc_pingpong 64 B (cold)\tusec_per_iter\tC\t1\t100"));
        assertThat(rows).hasSize(4);
        assertThat(rows.get(0).ratio()).as("median 11 over median 10").isEqualTo(1.1);
        assertThat(rows.get(0).met()).isFalse();
        assertThat(rows.get(1).ratio()).isEqualTo(0.99);
        assertThat(rows.get(1).met()).as("bandwidth >= 0.98").isTrue();
        assertThat(rows.get(2).target()).isEqualTo(1.10);
        assertThat(rows.get(2).met()).as("event mode allows 1.10").isTrue();
        assertThat(rows.get(3).met()).as("cold pingpong allows 1.5").isTrue();
        String table = PerfReportCommand.table(rows);
        assertThat(table).contains("rdma4j/C").contains("3 of 4 targets met");
        assertThat(table.lines().filter(l -> l.startsWith("send_lat 64 B")).findFirst().orElseThrow())
                .contains("1.100").contains("NO");
    }

    @Test
    void theShortPathsRoundTripHasIssue30sTargets() {
        List<PerfReportCommand.Row> rows = PerfReportCommand.read(List.of(
                "short path 64 B busy\tusec_per_iter\trdma4j\t1\t140", "short path 64 B busy\tusec_per_iter\tC\t1\t100",
                "short path 64 B event\tusec_per_iter\trdma4j\t1\t140", "short path 64 B event\tusec_per_iter\tC\t1\t100"));
        assertThat(rows.get(0).target()).isEqualTo(1.3);
        assertThat(rows.get(0).met()).as("1.4 against busy C").isFalse();
        assertThat(rows.get(1).target()).isEqualTo(1.5);
        assertThat(rows.get(1).met()).as("1.4 against C -e").isTrue();
    }

    @Test
    void evenRoundsTakeTheMeanOfTheMiddleTwo() {
        assertThat(PerfReportCommand.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
    }

    @Test
    void aMalformedLineIsNamed() {
        assertThatThrownBy(() -> PerfReportCommand.read(List.of("a\tb\tc"))).hasMessageContaining("a\tb\tc");
        assertThatThrownBy(() -> PerfReportCommand.read(List.of("a\tb\tjava\t1\t2"))).hasMessageContaining("java");
    }
}
