package dev.rdma4j.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Compiles a C program with gcc ({@code -Wall -Werror}) and runs it: the conformance tests' C side. */
public final class Gcc {
    private Gcc() {
    }

    /**
     * Writes {@code source} to {@code dir/name.c}, compiles it and runs it.
     *
     * @return what the program printed
     */
    public static String compileAndRun(Path dir, String name, CharSequence source) throws Exception {
        Path src = dir.resolve(name + ".c");
        Files.writeString(src, source);
        Path exe = dir.resolve(name);
        run(dir, "gcc", "-Wall", "-Werror", "-o", exe.toString(), src.toString());
        return run(dir, exe.toString());
    }

    private static String run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s failed:%n%s", String.join(" ", command), output).isZero();
        return output;
    }
}
