package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs a class's {@code main} in a child JVM (this one's class path, native access enabled, the guest's
 * C1/SerialGC flags when in the guest) in a fresh working directory, so that a JVM crash is observed from
 * outside: its exit status and any {@code hs_err} file it leaves.
 */
record ChildJvm(int exitCode, String output, List<Path> crashLogs) {

    static ChildJvm run(Path workDir, Class<?> main, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:ErrorFile=" + workDir.resolve("hs_err_pid%p.log")));
        if (System.getenv("RDMA4J_IN_GUEST") != null) {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        assertThat(p.isAlive()).as("child JVM %s still running after the deadline", main.getSimpleName()).isFalse();
        try (Stream<Path> files = Files.list(workDir)) {
            return new ChildJvm(p.exitValue(), new String(out),
                    files.filter(f -> f.getFileName().toString().startsWith("hs_err")).toList());
        }
    }

    /** Asserts a live JVM: exit 0 and no crash log. */
    ChildJvm survived() {
        assertThat(crashLogs).as("hs_err files (JVM crash); output:%n%s", output).isEmpty();
        assertThat(exitCode).as("exit status; output:%n%s", output).isZero();
        return this;
    }
}
