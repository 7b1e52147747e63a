package dev.rdma4j.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * {@link HangWatchdog}: a test that runs past its limit is named with the threads' stacks and interrupted; one that
 * ignores the interrupt ends the JVM (here: a stand-in for the halt); a test within its limit is left alone.
 */
class HangWatchdogTest {

    /** Runs one method of {@link Subjects} under a watchdog of {@code limit} s; returns the watchdog's output. */
    private static String runUnderWatchdog(String method, long limit, long grace, Runnable halt) {
        return runUnderWatchdog(Subjects.class, method, limit, grace, halt);
    }

    private static String runUnderWatchdog(Class<?> type, String method, long limit, long grace, Runnable halt) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        HangWatchdog watchdog = new HangWatchdog(limit, 1, grace, out, halt);
        System.setProperty("rdma4j.hangWatchdogSubjects", "true");
        try {
            SummaryGeneratingListener summary = new SummaryGeneratingListener();
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectMethod(type, method)).build(), watchdog, summary);
            out.println("tests failed: " + summary.getSummary().getTotalFailureCount());
        } finally {
            System.clearProperty("rdma4j.hangWatchdogSubjects");
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aTestPastItsLimitIsNamedWithTheStacksAndInterrupted() {
        String out = runUnderWatchdog("sleepsForAMinute", 1, 30, () -> { });
        assertThat(out).contains("HANG: dev.rdma4j.testing.HangWatchdogTest$Subjects#sleepsForAMinute")
                .contains("has run 1 s, its limit")
                .containsPattern("at java.base@[^/]*/java.lang.Thread.sleep")
                .contains("dev.rdma4j.testing.HangWatchdogTest$Subjects.sleepsForAMinute(HangWatchdogTest.java")
                .doesNotContain("the JVM halts")
                .contains("tests failed: 1"); // the interrupt ended it with InterruptedException
    }

    @Test
    void aTestThatIgnoresTheInterruptEndsTheJvm() throws Exception {
        AtomicBoolean halted = new AtomicBoolean();
        Subjects.release = new CountDownLatch(1);
        String out = runUnderWatchdog("ignoresInterrupts", 1, 1, () -> {
            halted.set(true);
            Subjects.release.countDown();
        });
        assertThat(halted).isTrue();
        assertThat(out).contains("HANG: dev.rdma4j.testing.HangWatchdogTest$Subjects#ignoresInterrupts")
                .contains("is still running 1 s after its thread was interrupted; the JVM halts");
    }

    @Test
    void aTestWithinItsLimitIsLeftAlone() {
        String out = runUnderWatchdog("sleepsBriefly", 3, 30, () -> { });
        assertThat(out).doesNotContain("HANG").contains("tests failed: 0");
    }

    @Test
    void aClassLimitRaisesTheDefault() {
        String out = runUnderWatchdog(LimitedSubjects.class, "sleepsTwoSeconds", 1, 30, () -> { });
        assertThat(out).doesNotContain("HANG").contains("tests failed: 0");
    }

    @Test
    void classProgressPrintsALinePerClassAsItFinishes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        System.setProperty("rdma4j.hangWatchdogSubjects", "true");
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectMethod(Subjects.class, "sleepsBriefly"), selectMethod(Subjects.class, "fails"),
                            selectMethod(LimitedSubjects.class, "sleepsTwoSeconds")).build(),
                    new ClassProgress(true, out));
        } finally {
            System.clearProperty("rdma4j.hangWatchdogSubjects");
        }
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines().toList()).hasSize(2)
                .anySatisfy(l -> assertThat(l).matches(
                        "progress: dev\\.rdma4j\\.testing\\.HangWatchdogTest\\$Subjects: 1 passed, 1 failed in \\d+\\.\\d s"))
                .anySatisfy(l -> assertThat(l).matches(
                        "progress: dev\\.rdma4j\\.testing\\.HangWatchdogTest\\$LimitedSubjects: 1 passed, 0 failed in \\d+\\.\\d s"));
    }

    /** The watched tests: run only by the tests above (the property), never by discovery. */
    @EnabledIfSystemProperty(named = "rdma4j.hangWatchdogSubjects", matches = "true")
    static class Subjects {
        static volatile CountDownLatch release;

        @Test
        void sleepsForAMinute() throws InterruptedException {
            Thread.sleep(60_000);
        }

        @Test
        void sleepsBriefly() throws InterruptedException {
            Thread.sleep(1_500);
        }

        @Test
        void fails() {
            throw new AssertionError("fails on purpose");
        }

        @Test
        void ignoresInterrupts() throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < until) {
                try {
                    if (release.await(10, TimeUnit.MILLISECONDS)) {
                        return;
                    }
                } catch (InterruptedException swallowed) {
                    // the watchdog's interrupt, ignored on purpose
                }
            }
        }
    }

    /** A class whose tests state a longer limit than the default. */
    @EnabledIfSystemProperty(named = "rdma4j.hangWatchdogSubjects", matches = "true")
    @HangWatchdog.Limit(seconds = 5)
    static class LimitedSubjects {
        @Test
        void sleepsTwoSeconds() throws InterruptedException {
            Thread.sleep(2_000);
        }
    }
}
