package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.Gcc;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PingpongReportTest {

    @Test
    void addressLinesHaveTheCFormat() {
        QpEndpoint e = new QpEndpoint(0x12, 0xab, 0x1234, Gid.parseHex("00000000000000000000ffffc6120001"));
        assertThat(PingpongReport.localAddress(e, false))
                .isEqualTo("  local address:  LID 0x0012, QPN 0x0000ab, PSN 0x001234, GID ::ffff:198.18.0.1");
        assertThat(PingpongReport.localAddress(e, true))
                .isEqualTo("  local address:  LID 0x0012, QPN 0x0000ab, PSN 0x001234: GID ::ffff:198.18.0.1");
        assertThat(PingpongReport.remoteAddress(new QpEndpoint(0, 0xffffff, 0, Gid.ZERO)))
                .isEqualTo("  remote address: LID 0x0000, QPN 0xffffff, PSN 0x000000, GID ::");
    }

    /** The summary lines for many timings, against the C code's own arithmetic and printf. */
    @Test
    void summaryMatchesTheCArithmeticAndPrintf(@TempDir Path dir) throws Exception {
        Random random = new Random(7);
        List<String> cases = new ArrayList<>();
        List<String> ours = new ArrayList<>();
        long[][] fixed = {{4096, 1000, 125}, {1, 1, 0}, {2048, 3, 1}, {4096, 1000, 1_000_000}, {512, 200, 5}};
        for (int i = 0; i < 300; i++) {
            long size = i < fixed.length ? fixed[i][0] : 1 + random.nextInt(65536);
            long iters = i < fixed.length ? fixed[i][1] : 1 + random.nextInt(100_000);
            long usec = i < fixed.length ? fixed[i][2] : random.nextLong(1, 100_000_000L);
            cases.add(size + " " + iters + " " + usec);
            ours.addAll(PingpongReport.summary(size, iters, (float) usec).lines().toList());
        }
        List<String> c = Gcc.run(dir, """
                #include <stdio.h>
                #include <stdlib.h>
                int main(int argc, char **argv) {
                  for (int i = 1; i < argc; i++) {
                    unsigned int size, iters; long long us;
                    sscanf(argv[i], "%u %u %lld", &size, &iters, &us);
                    float usec = us;
                    long long bytes = (long long) size * iters * 2;
                    printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\\n", bytes, usec / 1000000., bytes * 8. / usec);
                    printf("%d iters in %.2f seconds = %.2f usec/iter\\n", iters, usec / 1000000., usec / iters);
                  }
                  return 0;
                }
                """, cases.toArray(String[]::new));
        assertThat(ours).containsExactlyElementsOf(c);
    }

    @Test
    void roundsTheExactBinaryValueHalfToEven() {
        assertThat(PingpongReport.fixed2(0.125)).isEqualTo("0.12");
        assertThat(PingpongReport.fixed2(0.375)).isEqualTo("0.38");
        assertThat(PingpongReport.fixed2(2.675)).isEqualTo("2.67"); // 2.67499999...
        assertThat(PingpongReport.fixed2(1e6)).isEqualTo("1000000.00");
        assertThat(PingpongReport.fixed2(Double.POSITIVE_INFINITY)).isEqualTo("inf");
    }
}
