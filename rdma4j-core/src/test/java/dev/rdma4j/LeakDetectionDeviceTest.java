package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leak detector on real verbs objects, in a child JVM (the leaked objects stay allocated until it exits): a
 * context and a protection domain created and dropped without {@code close()} are reported with where they were
 * created at level {@code paranoid}, and reported without it (no stack walk) at {@code simple}.
 */
@Tag("device")
class LeakDetectionDeviceTest {

    /** Child: leaks a context with a PD in it, collects garbage until both are reported, prints the count. */
    public static final class Leaker {
        public static void main(String[] args) throws Exception {
            long before = LeakDetection.leaksReported();
            leakAContext();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (LeakDetection.leaksReported() < before + 2 && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(50);
            }
            System.out.println("level " + LeakDetection.level() + ", leaks reported: "
                    + (LeakDetection.leaksReported() - before));
        }

        private static void leakAContext() throws VerbsException {
            Context ctx = TestDevice.device().open();
            ctx.allocateProtectionDomain();
        }
    }

    private static String run(Path dir, String level) throws Exception {
        return ChildJvm.run(dir, List.of("-Ddev.rdma4j.leakDetection=" + level), 300, Leaker.class).survived()
                .output();
    }

    @Test
    void aLeakedContextAndItsProtectionDomainAreReportedWithWhereTheyWereCreated(@TempDir Path dir)
            throws Exception {
        String out = run(dir, "paranoid");
        String dev = TestDevice.device().name();
        String site = " created at dev.rdma4j.LeakDetectionDeviceTest$Leaker.leakAContext(LeakDetectionDeviceTest.java:";
        assertThat(out).contains("level PARANOID, leaks reported: 2")
                .contains("LEAK: Context(" + dev + ")" + site)
                .contains("LEAK: ProtectionDomain(" + dev + ")" + site)
                // the creation site as the logged stack trace, down to the caller's caller
                .contains("Context(" + dev + ") was created here")
                .contains("at dev.rdma4j.LeakDetectionDeviceTest$Leaker.main(LeakDetectionDeviceTest.java:");
    }

    @Test
    void atSimpleTheLeakIsReportedWithoutASite(@TempDir Path dir) throws Exception {
        String out = run(dir, "simple");
        String dev = TestDevice.device().name();
        assertThat(out).contains("level SIMPLE, leaks reported: 2")
                .contains("LEAK: Context(" + dev + ") (-Ddev.rdma4j.leakDetection=paranoid says where it was created)")
                .doesNotContain("created at").doesNotContain("was created here");
    }
}
