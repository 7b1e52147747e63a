package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The house rule that every package states its threading model: each package of every module's main sources has a
 * {@code package-info.java} whose documentation has a "Threading:" paragraph.
 */
class PackageDocumentationTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyPackageStatesItsThreadingModel() throws IOException {
        List<String> missing = new ArrayList<>();
        TreeSet<String> seen = new TreeSet<>();
        for (String module : List.of("rdma4j-core", "rdma4j-netty", "rdma4j-tools", "rdma4j-bench")) {
            Path sources = ROOT.resolve(module).resolve("src/main/java");
            assertThat(sources).as("the main sources of %s", module).isDirectory();
            try (Stream<Path> files = Files.walk(sources)) {
                for (Path dir : files.filter(p -> p.toString().endsWith(".java")).map(Path::getParent).distinct()
                        .toList()) {
                    String pkg = sources.relativize(dir).toString().replace('/', '.');
                    if (pkg.isEmpty()) {
                        continue; // module-info's directory
                    }
                    seen.add(module + ":" + pkg);
                    Path info = dir.resolve("package-info.java");
                    if (!Files.exists(info)) {
                        missing.add(module + ":" + pkg + " has no package-info.java");
                    } else if (!Files.readString(info).contains("Threading:")) {
                        missing.add(module + ":" + pkg + "'s package-info.java does not state its threading model");
                    }
                }
            }
        }
        assertThat(seen).as("packages found").contains("rdma4j-core:dev.rdma4j.engine", "rdma4j-netty:dev.rdma4j.netty");
        assertThat(missing).isEmpty();
    }
}
