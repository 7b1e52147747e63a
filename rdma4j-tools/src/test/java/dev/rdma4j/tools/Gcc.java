package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles and runs small C programs, so host tests can compare with what C prints. gcc is a documented
 * requirement (scripts/softroce installs it): without it these tests fail rather than skip.
 */
public final class Gcc {
    private Gcc() {
    }

    /**
     * Compiles {@code source} in {@code dir}, runs it with {@code args} and returns its stdout lines.
     *
     * @param dir    a scratch directory
     * @param source the C program
     * @param args   its arguments
     * @return stdout, by line
     * @throws Exception if it cannot run
     */
    public static List<String> run(Path dir, String source, String... args) throws Exception {
        assertThat(Path.of("/usr/bin/gcc")).as("gcc (apt-get install gcc)").isExecutable();
        Path src = Files.createTempFile(dir, "prog", ".c");
        Files.writeString(src, source);
        Path exe = dir.resolve(src.getFileName().toString().replace(".c", ""));
        Process cc = new ProcessBuilder("gcc", "-O0", "-o", exe.toString(), src.toString()).inheritIO().start();
        assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(cc.exitValue()).as("gcc").isZero();
        List<String> cmd = new ArrayList<>(List.of(exe.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> out = new String(p.getInputStream().readAllBytes()).lines().toList();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        return out;
    }
}
