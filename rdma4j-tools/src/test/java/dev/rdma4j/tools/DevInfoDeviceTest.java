package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.Device;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code rdma4j devinfo} against rdma-core's {@code ibv_devinfo} on the same device. */
@Tag("device")
class DevInfoDeviceTest {

    @Test
    void plainOutputIsIdenticalToIbvDevinfo() throws Exception {
        Device d = Device.byNameOrDefault(null);
        String c = ibvDevinfo("-d", d.name());
        assertThat(DevInfoCommand.describe(d, 0, false)).isEqualTo(c);
    }

    @Test
    void everyVerboseLineAppearsInIbvDevinfoInOrder() throws Exception {
        Device d = Device.byNameOrDefault(null);
        List<String> ours = DevInfoCommand.describe(d, 0, true).lines().filter(l -> !l.isEmpty()).toList();
        List<String> theirs = ibvDevinfo("-v", "-d", d.name()).lines().toList();
        List<String> missing = new ArrayList<>();
        int at = 0;
        for (String line : ours) {
            int found = theirs.subList(at, theirs.size()).indexOf(line);
            if (found < 0) {
                missing.add(line);
            } else {
                at += found + 1;
            }
        }
        assertThat(missing).as("lines of rdma4j devinfo -v not in ibv_devinfo -v (in order):%n%s",
                String.join("\n", theirs)).isEmpty();
        assertThat(ours).hasSizeGreaterThan(40);
        assertThat(ours).anyMatch(l -> l.contains("GID[  1]:\t\t::ffff:"));
    }

    /** {@code -v} too, extended attributes ({@code ibv_query_device_ex}) and {@code num_comp_vectors} included. */
    @Test
    void verboseOutputIsIdenticalToIbvDevinfo() throws Exception {
        Device d = Device.byNameOrDefault(null);
        assertThat(DevInfoCommand.describe(d, 0, true)).isEqualTo(ibvDevinfo("-v", "-d", d.name()));
    }

    @Test
    void portSelectionMatches() throws Exception {
        Device d = Device.byNameOrDefault(null);
        assertThat(DevInfoCommand.describe(d, 1, false)).isEqualTo(ibvDevinfo("-d", d.name(), "-i", "1"));
    }

    private static String ibvDevinfo(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ibv_devinfo"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        return out;
    }
}
