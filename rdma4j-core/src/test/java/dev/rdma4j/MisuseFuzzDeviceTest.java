package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.testing.HangWatchdog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12's misuse fuzzer on the device: {@link MisuseFuzz}'s property runs in a child JVM per seed (three
 * fixed seeds and one random one, printed), and the child must not crash (no {@code hs_err} file, no exit status
 * of 128 or more), must not hang (a step that outlives {@link #STEP_DEADLINE} halts it with status 3, and the
 * whole child has {@link #CHILD_DEADLINE}), and every call must return or throw a documented exception
 * ({@link MisuseFuzz#documented}: exit 0).
 *
 * <p>A failing seed reproduces: {@code RDMA4J_FUZZ_SEEDS=S RDMA4J_FUZZ_TRIES=T scripts/device-tests
 * --select-class dev.rdma4j.MisuseFuzzDeviceTest} (the command is printed with each seed).
 */
@Tag("device")
@HangWatchdog.Limit(seconds = 1800)
class MisuseFuzzDeviceTest {
    /** Fixed seeds; a random fourth is added (and printed) on each run. */
    static final long[] SEEDS = {20261123L, 12L, 777L};
    /** Tries (random call sequences of 8..40 steps, each on a fresh world) per seed: the guest's ~3 minutes. */
    static final int TRIES = 2;
    static final Duration STEP_DEADLINE = Duration.ofSeconds(60);
    /** A hang catcher, not a budget: some 40-95 s a seed in the guest, two seeds at a time. */
    static final Duration CHILD_DEADLINE = Duration.ofSeconds(900);
    /** Children run at once. */
    static final int PARALLEL_CHILDREN = 2;

    private record Run(long seed, String again, ChildJvm child, long seconds) {
    }
    private static final Pattern SUMMARY = Pattern.compile(
            "misuse fuzz: seed (-?\\d+), (\\d+) tries, (\\d+) calls, (\\d+) refused with documented exceptions: (\\w+)");

    @Test
    void randomMisuseNeitherCrashesNorHangsAndOnlyThrowsDocumentedExceptions(@TempDir Path dir) throws Exception {
        List<Long> seeds = new ArrayList<>();
        String fixed = System.getenv("RDMA4J_FUZZ_SEEDS");
        if (fixed != null && !fixed.isBlank()) {
            for (String s : fixed.split(",")) {
                seeds.add(Long.parseLong(s.trim()));
            }
        } else {
            for (long s : SEEDS) {
                seeds.add(s);
            }
            seeds.add(new SecureRandom().nextLong());
        }
        String t = System.getenv("RDMA4J_FUZZ_TRIES");
        int tries = t == null || t.isBlank() ? TRIES : Integer.parseInt(t.trim());
        long calls = 0;
        long refused = 0;
        long started = System.nanoTime();
        // two children at a time (the guest has two vCPUs; a child is mostly one thread of calls): the seeds are
        // independent worlds on their own contexts, and each child's outcome is checked in seed order after
        List<Future<Run>> runs = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(PARALLEL_CHILDREN)) {
            for (long seed : seeds) {
                String again = "RDMA4J_FUZZ_SEEDS=" + seed + " RDMA4J_FUZZ_TRIES=" + tries
                        + " scripts/device-tests --select-class " + getClass().getName();
                System.out.println("misuse fuzz: seed " + seed + " (reproduce: " + again + ")");
                Path work = Files.createDirectory(dir.resolve("seed" + seed));
                runs.add(pool.submit(() -> {
                    long t0 = System.nanoTime();
                    ChildJvm child = ChildJvm.run(work, CHILD_DEADLINE, MisuseFuzz.Main.class, Long.toString(seed),
                            Integer.toString(tries), Long.toString(STEP_DEADLINE.toSeconds()));
                    return new Run(seed, again, child, Duration.ofNanos(System.nanoTime() - t0).toSeconds());
                }));
            }
        }
        for (Future<Run> f : runs) {
            Run run = f.get();
            long seed = run.seed();
            ChildJvm child = run.child();
            String context = "seed " + seed + " (reproduce: " + run.again() + "); child output:\n" + child.output();
            assertThat(child.crashLogs()).as("hs_err files (the JVM crashed), %s", context).isEmpty();
            assertThat(child.exitCode()).as("exit status >= 128 (the JVM died of a signal), %s", context)
                    .isLessThan(128);
            assertThat(child.output()).as("a step hung, %s", context).doesNotContain("FUZZ HANG");
            assertThat(child.exitCode()).as("exit status (1: an undocumented outcome), %s", context).isZero();
            Matcher m = SUMMARY.matcher(child.output());
            assertThat(m.find()).as("the child's summary line, %s", context).isTrue();
            assertThat(m.group(5)).isEqualTo("ok");
            assertThat(Long.parseLong(m.group(1))).isEqualTo(seed);
            assertThat(Integer.parseInt(m.group(2))).as("tries run").isEqualTo(tries);
            long c = Long.parseLong(m.group(3));
            assertThat(c).as("calls made by seed %d: the fuzzer did something", seed).isGreaterThan(8L * tries);
            assertThat(Long.parseLong(m.group(4))).as("refusals: it reached the checks").isPositive();
            calls += c;
            refused += Long.parseLong(m.group(4));
            System.out.printf("misuse fuzz: seed %d: %s tries, %d calls, %s refused with documented exceptions, %d s%n",
                    seed, m.group(2), c, m.group(4), run.seconds());
        }
        System.out.printf("misuse fuzz: %d seeds %s, %d tries each, %d calls, %d refused with documented exceptions, "
                + "no crash, no hang, %d s%n", seeds.size(), seeds, tries, calls, refused,
                Duration.ofNanos(System.nanoTime() - started).toSeconds());
    }
}
