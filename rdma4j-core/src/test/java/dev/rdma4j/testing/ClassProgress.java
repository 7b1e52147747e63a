package dev.rdma4j.testing;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * One line per finished test class, as it finishes, when the system property {@code rdma4j.progress} is
 * {@code true} (the device and two-host scripts set it): the class, its tests passed and failed, and its seconds.
 * The console launcher prints its tree only at the end of the run, so without these lines a long run is silent, and
 * an outer limit on silence ({@code scripts/softroce --idle-timeout}) could not tell it from a hang.
 *
 * <p>Threading: the callbacks run on the test-executing thread, one test at a time.
 */
public final class ClassProgress implements TestExecutionListener {

    private final boolean enabled;
    private final PrintStream out;
    private int classDepth;
    private long classStart;
    private int passed;
    private int failed;
    private int skipped;

    /** The listener JUnit loads: enabled by {@code -Drdma4j.progress=true}, lines on standard output. */
    public ClassProgress() {
        this(Boolean.getBoolean("rdma4j.progress"), System.out);
    }

    ClassProgress(boolean enabled, PrintStream out) {
        this.enabled = enabled;
        this.out = out;
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (enabled && isClass(id) && classDepth++ == 0) {
            classStart = System.nanoTime();
            passed = failed = skipped = 0;
        }
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (enabled && id.isTest()) {
            skipped++;
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!enabled) {
            return;
        }
        if (id.isTest()) {
            if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                passed++;
            } else {
                failed++;
            }
        } else if (isClass(id) && --classDepth == 0) {
            String name = ((ClassSource) id.getSource().orElseThrow()).getClassName();
            out.printf("progress: %s: %d passed, %d failed%s in %.1f s%s%n", name, passed, failed,
                    skipped > 0 ? ", " + skipped + " skipped" : "",
                    (System.nanoTime() - classStart) / (double) TimeUnit.SECONDS.toNanos(1),
                    result.getStatus() == TestExecutionResult.Status.SUCCESSFUL ? ""
                            : " (the class itself: " + result.getStatus() + ")");
            out.flush();
        }
    }

    /** A class container (a class nested in another one is counted with the outer one). */
    private static boolean isClass(TestIdentifier id) {
        return id.isContainer() && id.getSource().filter(s -> s instanceof ClassSource).isPresent();
    }
}
