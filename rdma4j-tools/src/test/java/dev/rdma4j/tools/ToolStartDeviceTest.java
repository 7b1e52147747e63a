package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM {@code bin/rdma4j} starts, as a process (the other tool tests run the tools in their own JVM): it uses the
 * JDK's AOT cache that {@code scripts/device-tests} made of the tools jar (trained on the host, used here), and
 * neither it nor a damaged cache puts a word of the JVM's into a drop-in's output.
 */
@Tag("device")
class ToolStartDeviceTest {
    @TempDir
    Path dir;

    private static Path repo() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isExecutable(p.resolve("bin/rdma4j"))) {
                return p;
            }
        }
        throw new AssertionError("no bin/rdma4j above " + Path.of("").toAbsolutePath());
    }

    private ToolRuns.Run run(Map<String, String> env, String... cmd) throws Exception {
        return ToolRuns.finish(ToolRuns.process(dir, String.join(" ", cmd), List.of(cmd), env));
    }

    @Test
    void devinfoStartsFromTheAotCacheMadeOnTheHost() throws Exception {
        Path cache = repo().resolve("rdma4j-tools/target/rdma4j-tools.aot");
        assertThat(cache).as("scripts/device-tests makes it after ./mvnw install").isRegularFile();
        assertThat(Files.getLastModifiedTime(cache))
                .isGreaterThanOrEqualTo(Files.getLastModifiedTime(repo().resolve("rdma4j-tools/target/rdma4j-tools.jar")));
        ToolRuns.Run r = run(Map.of("RDMA4J_JAVA_OPTS", "-Xlog:aot=info:stderr"),
                repo().resolve("bin/rdma4j").toString(), "devinfo");
        assertThat(r.status()).as("%s", r).isZero();
        assertThat(r.err()).as("the JVM maps the cache's linked classes").contains("Using AOT-linked classes: true");
    }

    @Test
    void devinfoOutputIsIbvDevinfosWithTheCacheAndWithADamagedOne() throws Exception {
        ToolRuns.Run c = run(Map.of(), "ibv_devinfo");
        assertThat(c.status()).as("%s", c).isZero();
        Path damaged = dir.resolve("damaged.aot");
        Files.write(damaged, new byte[4096]); // newer than the jar: bin/rdma4j gives it to the JVM
        for (String cache : List.of("", damaged.toString())) {
            Map<String, String> env = cache.isEmpty() ? Map.of() : Map.of("RDMA4J_AOT_CACHE", cache);
            ToolRuns.Run r = run(env, repo().resolve("bin/rdma4j").toString(), "devinfo");
            assertThat(r.status()).as("cache %s: %s", cache, r).isZero();
            assertThat(r.out()).as("cache %s: stdout", cache).isEqualTo(c.out());
            assertThat(r.err()).as("cache %s: stderr", cache).isEmpty();
        }
    }
}
