package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code scripts/lib/perf-compare/pin.sh}: {@code perf-compare --icount} runs each side of a pair on a vCPU of its
 * own (an event-mode count moved by up to 27% of its median between rounds with the sides wherever the scheduler put
 * them). The prefix is run here for real: the command's affinity is read back from {@code /proc/self/status}.
 */
class PinScriptTest {
    /** Runs {@code pin_prefix ROLE} with PIN=pin, then COMMAND under the prefix; its output. */
    private static String underPrefix(String pin, String role, String command) throws Exception {
        return run(pin, null, ". \"$0\"; pin_prefix \"$1\"; \"${PIN_PREFIX[@]}\" sh -c \"$2\"", role, command);
    }

    private static String run(String pin, String nproc, String run, String role, String command) throws Exception {
        Path script = null;
        for (Path p = Path.of("").toAbsolutePath(); p != null && script == null; p = p.getParent()) {
            Path s = p.resolve("scripts/lib/perf-compare/pin.sh");
            script = Files.isRegularFile(s) ? s : null;
        }
        assertThat(script).as("pin.sh above " + Path.of("").toAbsolutePath()).isNotNull();
        ProcessBuilder b = new ProcessBuilder("bash", "-uc", run, script.toString(), role, command)
                .redirectErrorStream(true);
        b.environment().put("PIN", pin);
        if (nproc != null) {
            b.environment().put("PIN_NPROC", nproc);
        }
        b.environment().put("RDMA4J_JAVA_OPTS", "-Xbatch");
        Process p = b.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private static final String AFFINITY =
            "grep Cpus_allowed_list /proc/self/status | cut -f2; echo \"$RDMA4J_JAVA_OPTS\"";

    @Test
    void eachSideRunsOnAVcpuOfItsOwnAndItsJvmIsSizedForTheMachine() throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        String unpinned = underPrefix("0", "server", AFFINITY).lines().findFirst().orElseThrow();
        if (cpus < 2) { // nothing to pin to: the run goes as is
            assertThat(underPrefix("1", "client", AFFINITY)).isEqualTo(unpinned + "\n-Xbatch");
            return;
        }
        String sized = "-Xbatch -XX:ActiveProcessorCount=" + cpus;
        assertThat(underPrefix("1", "server", AFFINITY)).isEqualTo("0\n" + sized);
        assertThat(underPrefix("1", "client", AFFINITY)).isEqualTo("1\n" + sized);
    }

    @Test
    void onOneCpuTheRunGoesAsIs() throws Exception {
        String words = ". \"$0\"; pin_prefix \"$1\"; echo \"${PIN_PREFIX[*]}\"";
        assertThat(run("1", "1", words, "client", "")).isEmpty();
        assertThat(run("1", "2", words, "client", ""))
                .isEqualTo("env RDMA4J_JAVA_OPTS=-Xbatch -XX:ActiveProcessorCount=2 taskset -c 1");
    }

    @Test
    void withoutPinTheRunGoesAsIs() throws Exception {
        String parent = new String(new ProcessBuilder("sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2")
                .start().getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(underPrefix("0", "client", AFFINITY)).isEqualTo(parent + "\n-Xbatch");
        assertThat(underPrefix("", "server", AFFINITY)).isEqualTo(parent + "\n-Xbatch");
    }
}
