package dev.rdma4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.MemoryRegion;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No class of the bench's main output (its sources and the classes JMH generates from them) is in a package of
 * rdma4j-core: a package split across two jars works only on the class path, and a bench class in a core package
 * reaches its package-private members without saying so. The benchmarks reach the core's internals through
 * {@link Internals} instead.
 */
class NoSplitPackageTest {
    @Test
    void noBenchClassIsInAPackageOfTheCore() throws Exception {
        Set<String> core = packages(codeSource(MemoryRegion.class)).keySet();
        assertThat(core).as("the core's packages").contains("dev.rdma4j", "dev.rdma4j.internal.ffi");
        Map<String, Set<String>> bench = packages(codeSource(Bench.class));
        assertThat(bench).as("the bench's packages").containsKey("dev.rdma4j.bench");
        Map<String, Set<String>> split = new TreeMap<>(bench);
        split.keySet().retainAll(core);
        assertThat(split).as("bench classes in packages of rdma4j-core (%s)", codeSource(MemoryRegion.class))
                .isEmpty();
    }

    /** Where {@code c} was loaded from: a directory (target/classes in a reactor build) or a jar. */
    private static Path codeSource(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** The packages of the classes under {@code root} (a directory or a jar), each with its classes. */
    private static Map<String, Set<String>> packages(Path root) throws IOException {
        if (Files.isDirectory(root)) {
            return packagesUnder(root);
        }
        try (FileSystem jar = FileSystems.newFileSystem(root)) {
            return packagesUnder(jar.getPath("/"));
        }
    }

    private static Map<String, Set<String>> packagesUnder(Path root) throws IOException {
        Map<String, Set<String>> packages = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(f -> f.toString().endsWith(".class") && !f.getFileName().toString().equals("module-info.class")
                    && !root.relativize(f).startsWith("META-INF")).forEach(f -> {
                        Path rel = root.relativize(f);
                        String pkg = rel.getParent() == null ? "" : rel.getParent().toString().replace('/', '.');
                        packages.computeIfAbsent(pkg, k -> new TreeSet<>()).add(rel.getFileName().toString());
                    });
        }
        return packages;
    }
}
