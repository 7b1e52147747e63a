package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code scripts/lib/perf-compare/event-spin.sh}: the figures {@code perf-compare --icount} counts from a window. The
 * plugin leaves busy polling's empty polls out of total and user (spin); in the event-mode cases nothing busy-waits,
 * and until 2026-11-30 rdma4j's empty polls there (2,546 an iteration of send_lat -e, the polls that confirmed each
 * drain) were left out too, flattering it: they are work there, and counted.
 */
class EventSpinScriptTest {
    private static String counted(String name, String values) throws Exception {
        Path script = null;
        for (Path p = Path.of("").toAbsolutePath(); p != null && script == null; p = p.getParent()) {
            Path s = p.resolve("scripts/lib/perf-compare/event-spin.sh");
            script = Files.isRegularFile(s) ? s : null;
        }
        assertThat(script).as("event-spin.sh above " + Path.of("").toAbsolutePath()).isNotNull();
        Process p = new ProcessBuilder("bash", "-c", ". \"$0\"; counted_values \"$1\" \"$2\"", script.toString(), name,
                values).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    @Test
    void anEventModeCasesEmptyPollsCountAsWork() throws Exception {
        // total user kernel spin tick
        assertThat(counted("send_lat -e 64 B", "97834 11919 85914 2546 2438")).isEqualTo("100380 14465 85914 2546 2438");
        assertThat(counted("short path 64 B event", "100 10 90 5 1")).isEqualTo("105 15 90 5 1");
        assertThat(counted("short path async event", "100 10 90 5 1")).isEqualTo("105 15 90 5 1");
        assertThat(counted("rc_pingpong -e 64 B", "100 10 90 5 1")).isEqualTo("105 15 90 5 1");
    }

    @Test
    void aBusyCasesEmptyPollsStayLeftOut() throws Exception {
        assertThat(counted("send_lat 64 B", "100 10 90 5 1")).isEqualTo("100 10 90 5 1");
        assertThat(counted("short path 64 B busy", "100 10 90 5 1")).isEqualTo("100 10 90 5 1");
        assertThat(counted("write_bw 64 KiB", "100 10 90 5 1")).isEqualTo("100 10 90 5 1");
    }
}
