package dev.rdma4j;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Test helper: how many file descriptors this process has open (leak checks). */
public final class OpenFds {
    private OpenFds() {
    }

    /**
     * The entries of {@code /proc/self/fd}.
     *
     * @return the count
     */
    public static long count() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
