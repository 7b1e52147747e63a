package dev.rdma4j.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * {@code scripts/bench}'s entry point: JMH with its own command line (the options of {@code java -jar
 * rdma4j-bench.jar}), then a table of each benchmark's allocation per operation in its steady state.
 *
 * <p>Why the table: JMH's {@code gc.alloc.rate.norm} of a benchmark is the mean over its measured iterations, and
 * JMH runs the trial's {@code @TearDown(Level.Trial)} inside the last one: closing a device, its queue pairs and
 * their regions allocates (messages, clean-up lists), hundreds of kilobytes in the guest, which over the few slow
 * operations of an emulated device iteration reads as ~1 B/op. The iterations before the last show what the
 * measured call allocates, plus the harness's own few kilobytes an iteration. The table prints them all, and the
 * largest of them as the steady state.
 */
public final class Bench {
    private static final String NORM = "gc.alloc.rate.norm";

    private Bench() {
    }

    /**
     * Runs JMH with {@code args}, then prints the allocation table.
     *
     * @param args JMH's command line
     * @throws Exception if JMH fails
     */
    public static void main(String[] args) throws Exception {
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            System.err.println("Error parsing command line: " + e.getMessage());
            System.exit(1);
            return;
        }
        if (cmd.shouldHelp() || cmd.shouldList() || cmd.shouldListWithParams() || cmd.shouldListProfilers()
                || cmd.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args); // JMH's own answers to these
            return;
        }
        Collection<RunResult> results;
        try {
            results = new Runner(cmd).run();
        } catch (RunnerException e) {
            System.err.println("ERROR: " + e.getMessage());
            System.exit(1);
            return;
        }
        System.out.print(allocationTable(results));
    }

    /**
     * The allocation table of {@code results}: per benchmark, JMH's mean B/op, the steady state (the largest of
     * the measured iterations but the last of each fork) and every measured iteration's B/op; empty without the
     * {@code gc} profiler.
     *
     * @param results JMH's results
     * @return the table, or an empty string
     */
    static String allocationTable(Collection<RunResult> results) {
        List<String[]> rows = new ArrayList<>();
        for (RunResult run : results) {
            Result<?> mean = run.getSecondaryResults().get(NORM);
            if (mean == null) {
                continue;
            }
            double steady = Double.NaN;
            List<String> each = new ArrayList<>();
            for (BenchmarkResult fork : run.getBenchmarkResults()) {
                List<IterationResult> its = new ArrayList<>(fork.getIterationResults());
                for (int i = 0; i < its.size(); i++) {
                    Result<?> r = its.get(i).getSecondaryResults().get(NORM);
                    if (r == null) {
                        continue;
                    }
                    each.add(f(r.getScore()));
                    if (i < its.size() - 1) {
                        steady = Double.isNaN(steady) ? r.getScore() : Math.max(steady, r.getScore());
                    }
                }
            }
            String label = run.getParams().getBenchmark() + params(run);
            rows.add(new String[] {label, f(mean.getScore()), Double.isNaN(steady) ? "n/a" : f(steady),
                String.join(" ", each)});
        }
        if (rows.isEmpty()) {
            return "";
        }
        int w = "Benchmark".length();
        for (String[] r : rows) {
            w = Math.max(w, r[0].length());
        }
        StringBuilder sb = new StringBuilder();
        sb.append(System.lineSeparator()).append("Allocation (gc.alloc.rate.norm, B/op). JMH's mean includes the last")
                .append(" iteration, which also holds the trial's tear-down;").append(System.lineSeparator())
                .append("steady = the largest of the other measured iterations (the call's own allocation plus the")
                .append(" harness's few kB an iteration).").append(System.lineSeparator());
        String fmt = "%-" + w + "s  %12s  %12s  %s%n";
        sb.append(String.format(Locale.ROOT, fmt, "Benchmark", "mean B/op", "steady B/op", "per iteration"));
        for (String[] r : rows) {
            sb.append(String.format(Locale.ROOT, fmt, (Object[]) r));
        }
        return sb.toString();
    }

    private static String params(RunResult run) {
        Collection<String> keys = run.getParams().getParamsKeys();
        if (keys.isEmpty()) {
            return "";
        }
        List<String> kv = new ArrayList<>();
        for (String k : keys) {
            kv.add(k + "=" + run.getParams().getParam(k));
        }
        return " (" + String.join(", ", kv) + ")";
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, v < 10 ? "%.4f" : "%.1f", v);
    }
}
