package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import dev.rdma4j.testing.LogCapture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The leak detector on a stand-in resource (no device): an object collected without {@code close()} is reported
 * (log record and counter) with where it was created at level PARANOID, without it at SIMPLE, not at all at
 * DISABLED, and a closed object is never reported. The reports are read from the {@code java.util.logging} logger
 * behind {@link System.Logger} ({@link LeakDetection#LOGGER}).
 */
class LeakDetectionTest {
    private static final long DEADLINE_SECONDS = 60;

    private LogCapture log;
    private LeakDetection.Level was;

    @BeforeEach
    void capture() {
        was = LeakDetection.level();
        log = LogCapture.of(LeakDetection.LOGGER);
    }

    @AfterEach
    void restore() {
        log.close();
        LeakDetection.setLevel(was);
    }

    /** Creates a resource at {@code level} and drops it, unclosed; returns a weak reference to it. */
    private static WeakReference<NativeResource> leak(LeakDetection.Level level, String name) {
        LeakDetection.Level before = LeakDetection.level();
        LeakDetection.setLevel(level);
        try {
            return new WeakReference<>(createUnclosed(name));
        } finally {
            LeakDetection.setLevel(before);
        }
    }

    private static NativeResource createUnclosed(String name) {
        return new NativeResourceTest.Fake(name, null);
    }

    /** Collects garbage until {@code done}, or fails after the deadline. */
    private static void gcUntil(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("still waiting after %d s for %s", DEADLINE_SECONDS, what)
                    .isLessThan(deadline);
            System.gc();
            Thread.sleep(20);
        }
    }

    private List<LogRecord> reportsOf(String name) {
        return log.records().stream().filter(r -> r.getMessage() != null && r.getMessage().startsWith("LEAK: " + name + " ")).toList();
    }

    @Test
    void atParanoidALeakIsReportedWithItsCreationSite() throws Exception {
        long before = LeakDetection.leaksReported();
        WeakReference<NativeResource> ref = leak(LeakDetection.Level.PARANOID, "Fake(leaked-paranoid)");
        gcUntil("the leak report", () -> !reportsOf("Fake(leaked-paranoid)").isEmpty());
        assertThat(ref.get()).isNull();
        LogRecord r = reportsOf("Fake(leaked-paranoid)").getFirst();
        assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
        assertThat(r.getMessage()).contains("created at dev.rdma4j.LeakDetectionTest.createUnclosed(LeakDetectionTest.java:")
                .contains("was garbage-collected without close()");
        assertThat(r.getThrown()).as("the creation site as a stack trace").isNotNull()
                .hasMessage("Fake(leaked-paranoid) was created here");
        StackTraceElement[] site = r.getThrown().getStackTrace();
        assertThat(site[0].getMethodName()).isEqualTo("createUnclosed");
        assertThat(site[1].getMethodName()).isEqualTo("leak");
        assertThat(site[2].getMethodName()).isEqualTo("atParanoidALeakIsReportedWithItsCreationSite");
        assertThat(LeakDetection.leaksReported()).isGreaterThan(before);
        assertThat(reportsOf("Fake(leaked-paranoid)")).as("reported once").hasSize(1);
    }

    @Test
    void atSimpleNothingIsCapturedButTheLeakIsStillReported() throws Exception {
        LeakDetection.setLevel(LeakDetection.Level.SIMPLE);
        NativeResourceTest.Fake f = new NativeResourceTest.Fake("Fake(simple)", null);
        assertThat(f.createdAt()).as("no stack walk at SIMPLE").isNull();
        f.close();
        long before = LeakDetection.leaksReported();
        leak(LeakDetection.Level.SIMPLE, "Fake(leaked-simple)");
        gcUntil("the leak report", () -> !reportsOf("Fake(leaked-simple)").isEmpty());
        LogRecord r = reportsOf("Fake(leaked-simple)").getFirst();
        assertThat(r.getMessage()).doesNotContain("created at")
                .contains("(-Ddev.rdma4j.leakDetection=paranoid says where it was created)");
        assertThat(r.getThrown()).isNull();
        assertThat(LeakDetection.leaksReported()).isGreaterThan(before);
    }

    @Test
    void disabledCapturesAndReportsNothing() throws Exception {
        LeakDetection.setLevel(LeakDetection.Level.DISABLED);
        NativeResourceTest.Fake f = new NativeResourceTest.Fake("Fake(disabled)", null);
        assertThat(f.createdAt()).isNull();
        f.close();
        WeakReference<NativeResource> off = leak(LeakDetection.Level.DISABLED, "Fake(leaked-disabled)");
        gcUntil("the unreported object's collection", () -> off.get() == null);
        // a leak made after it, with detection on, is reported: by then the first would have been too
        leak(LeakDetection.Level.SIMPLE, "Fake(canary)");
        gcUntil("the canary's report", () -> !reportsOf("Fake(canary)").isEmpty());
        System.gc();
        Thread.sleep(200);
        assertThat(reportsOf("Fake(leaked-disabled)")).isEmpty();
    }

    @Test
    void aClosedObjectIsNotReported() throws Exception {
        WeakReference<NativeResource> closed = closedAndDropped();
        gcUntil("the closed object's collection", () -> closed.get() == null);
        leak(LeakDetection.Level.PARANOID, "Fake(canary2)");
        gcUntil("the canary's report", () -> !reportsOf("Fake(canary2)").isEmpty());
        System.gc();
        Thread.sleep(200);
        assertThat(reportsOf("Fake(closed)")).isEmpty();
    }

    private static WeakReference<NativeResource> closedAndDropped() {
        LeakDetection.setLevel(LeakDetection.Level.PARANOID);
        NativeResourceTest.Fake f = new NativeResourceTest.Fake("Fake(closed)", null);
        f.close();
        return new WeakReference<>(f);
    }

    @Test
    void thePropertyValuesNameTheLevels() {
        assertThat(LeakDetection.parse("disabled")).isEqualTo(LeakDetection.Level.DISABLED);
        assertThat(LeakDetection.parse("false")).isEqualTo(LeakDetection.Level.DISABLED);
        assertThat(LeakDetection.parse("SIMPLE")).isEqualTo(LeakDetection.Level.SIMPLE);
        assertThat(LeakDetection.parse(" Paranoid ")).isEqualTo(LeakDetection.Level.PARANOID);
        assertThat(LeakDetection.parse("true")).isEqualTo(LeakDetection.Level.PARANOID);
        assertThat(LeakDetection.parse("advanced")).isNull();
    }

    /** Off by default (issue 12: "enabled in tests, off by default"); the older flag still means paranoid. */
    @Test
    void withoutThePropertyTheDetectorIsOff() {
        assertThat(LeakDetection.initialLevel(null, false)).isEqualTo(LeakDetection.Level.DISABLED);
        assertThat(LeakDetection.initialLevel(null, true)).isEqualTo(LeakDetection.Level.PARANOID);
        assertThat(LeakDetection.initialLevel("simple", true)).isEqualTo(LeakDetection.Level.SIMPLE);
        assertThat(LeakDetection.initialLevel("bogus", false)).isEqualTo(LeakDetection.Level.DISABLED);
    }

    /** The build runs every test JVM with the detector at PARANOID (pom.xml, scripts/device-tests). */
    @Test
    void testsRunWithTheDetectorAtParanoid() {
        assertThat(System.getProperty(LeakDetection.PROPERTY)).isEqualTo("paranoid");
        assertThat(was).isEqualTo(LeakDetection.Level.PARANOID);
    }
}
