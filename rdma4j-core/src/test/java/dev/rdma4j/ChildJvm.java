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
 * Runs a class's {@code main} in a child JVM (this one's class path, native access enabled, this JVM's leak
 * detector level, the guest's C1/SerialGC flags when in the guest) in a fresh working directory, so that a JVM
 * crash is observed from outside: its exit status and any {@code hs_err} file it leaves. Public for the device
 * tests of other packages ({@code dev.rdma4j.connect}).
 *
 * @param exitCode  the child's exit status
 * @param output    its stdout and stderr
 * @param crashLogs the {@code hs_err} files it left
 */
public record ChildJvm(int exitCode, String output, List<Path> crashLogs) {

    /**
     * Runs {@code main} in a child JVM and waits for it (at most 300 s, then it is killed).
     *
     * @param workDir the child's working directory, where a crash log would land
     * @param main    a class with a {@code public static void main(String[])}
     * @param args    its arguments
     * @return the outcome
     */
    public static ChildJvm run(Path workDir, Class<?> main, String... args) throws IOException, InterruptedException {
        return run(workDir, List.of(), 300, main, args);
    }

    /**
     * Runs {@code main} in a child JVM and waits for it at most {@code deadline} (then it is killed, and the
     * assertion that it finished fails with its output).
     *
     * @param workDir  the child's working directory, where a crash log would land
     * @param deadline how long it may run
     * @param main     a class with a {@code public static void main(String[])}
     * @param args     its arguments
     * @return the outcome
     */
    public static ChildJvm run(Path workDir, java.time.Duration deadline, Class<?> main, String... args)
            throws IOException, InterruptedException {
        return run(workDir, List.of(), deadline.toSeconds(), main, args);
    }

    /**
     * Runs {@code main} in a child JVM with extra JVM options and waits for it (at most {@code timeoutSeconds}, then
     * it is killed).
     *
     * @param workDir        the child's working directory, where a crash log would land
     * @param jvmOptions     options before the class name, e.g. {@code -XX:NativeMemoryTracking=summary}
     * @param timeoutSeconds how long it may run
     * @param main           a class with a {@code public static void main(String[])}
     * @param args           its arguments
     * @return the outcome
     */
    public static ChildJvm run(Path workDir, List<String> jvmOptions, long timeoutSeconds, Class<?> main,
            String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:ErrorFile=" + workDir.resolve("hs_err_pid%p.log")));
        if (System.getenv("RDMA4J_IN_GUEST") != null) {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        }
        String leakDetection = System.getProperty("dev.rdma4j.leakDetection");
        if (leakDetection != null) { // the test JVM's leak detector level, for the child too
            cmd.add("-Ddev.rdma4j.leakDetection=" + leakDetection);
        }
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        // to a file, not a pipe: reading a pipe to its end would wait forever for a hung child
        Path log = Files.createTempFile(workDir, "child-output", ".txt");
        Process p = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        boolean finished = p.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(log);
        assertThat(finished).as("child JVM %s still running after %d s (hung; killed); output:%n%s",
                main.getSimpleName(), timeoutSeconds, out).isTrue();
        try (Stream<Path> files = Files.list(workDir)) {
            return new ChildJvm(p.exitValue(), out,
                    files.filter(f -> f.getFileName().toString().startsWith("hs_err")).toList());
        }
    }

    /**
     * Asserts a live JVM: exit 0 and no crash log.
     *
     * @return this
     */
    public ChildJvm survived() {
        assertThat(crashLogs).as("hs_err files (JVM crash); output:%n%s", output).isEmpty();
        assertThat(exitCode).as("exit status; output:%n%s", output).isZero();
        return this;
    }
}
