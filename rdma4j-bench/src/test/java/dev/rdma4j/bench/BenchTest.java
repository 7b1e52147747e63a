package dev.rdma4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * {@link Bench#allocationTable} on results of a real, short JMH run (in this JVM): one benchmark that allocates
 * nothing per call (encoding a send) and one that allocates by contract (an immutable completion copy).
 */
class BenchTest {
    @Test
    void theTableShowsEveryIterationAndASteadyStateWithoutTheLast() throws Exception {
        Collection<RunResult> results = new Runner(new OptionsBuilder()
                .include("dev\\.rdma4j\\.bench\\.(EncodeHostBench\\.send|CompletionsHostBench\\.get)$")
                .forks(0).warmupIterations(1).warmupTime(TimeValue.milliseconds(300))
                .measurementIterations(3).measurementTime(TimeValue.milliseconds(300))
                .timeUnit(TimeUnit.NANOSECONDS).addProfiler(GCProfiler.class).shouldFailOnError(true).build()).run();
        String table = Bench.allocationTable(results);
        List<String> lines = table.lines().toList();
        assertThat(lines).anyMatch(l -> l.startsWith("Benchmark") && l.contains("steady B/op"));
        String[] encode = row(lines, "dev.rdma4j.bench.EncodeHostBench.send");
        String[] copy = row(lines, "dev.rdma4j.bench.CompletionsHostBench.get");
        for (String[] r : List.of(encode, copy)) {
            // name, mean, steady, then the 3 measured iterations
            assertThat(r).as(Arrays.toString(r)).hasSize(6);
            double steady = Double.parseDouble(r[2]);
            assertThat(steady).as("the largest of the iterations before the last: %s", Arrays.toString(r))
                    .isEqualTo(Math.max(Double.parseDouble(r[3]), Double.parseDouble(r[4])));
        }
        assertThat(Double.parseDouble(encode[2])).as("encoding allocates nothing").isLessThan(0.5);
        assertThat(Double.parseDouble(copy[2])).as("a WorkCompletion copy allocates").isGreaterThan(16);
        assertThat(Bench.allocationTable(List.of())).isEmpty();
    }

    private static String[] row(List<String> lines, String name) {
        return lines.stream().filter(l -> l.startsWith(name + " ")).findFirst().orElseThrow().trim().split("\\s+");
    }
}
