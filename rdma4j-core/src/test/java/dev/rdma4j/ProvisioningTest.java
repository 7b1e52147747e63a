package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The provisioning list ({@code scripts/lib/packages}) covers what the host tests compile: every
 * {@code #include <...>} in any module's test sources resolves (through gcc) to a file that dpkg says belongs
 * to a listed package or to one of their dependencies ({@code Depends}/{@code Pre-Depends}, since provisioning
 * installs without recommends). A new include that only the developer's machine happens to have fails here
 * with the header and its package named, instead of on a brand-new machine.
 */
class ProvisioningTest {
    private static final Pattern INCLUDE = Pattern.compile("^\\s*#include\\s*<([^>]+)>", Pattern.MULTILINE);

    private static Path repo() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/lib/packages"))) {
                return p;
            }
        }
        throw new AssertionError("no scripts/lib/packages above " + Path.of("").toAbsolutePath());
    }

    /** The packages named in scripts/lib/packages (comments and blank lines dropped). */
    static Set<String> listed(Path repo) throws IOException {
        Set<String> out = new TreeSet<>();
        for (String line : Files.readAllLines(repo.resolve("scripts/lib/packages"))) {
            String name = line.replaceAll("#.*", "").strip();
            if (!name.isEmpty()) {
                out.add(name);
            }
        }
        return out;
    }

    /** Every header named by {@code #include <...>} in the test sources of every module. */
    static Set<String> includedHeaders(Path repo) throws IOException {
        Set<String> out = new TreeSet<>();
        try (Stream<Path> files = Files.walk(repo)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/test/"))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/build/")).toList()) {
                Matcher m = INCLUDE.matcher(Files.readString(f));
                while (m.find()) {
                    out.add(m.group(1));
                }
            }
        }
        return out;
    }

    private static String run(List<String> command, String stdin) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        return p.exitValue() + "\n" + out;
    }

    /** The file gcc uses for {@code #include <header>}, or null when it finds none. */
    static String resolve(String header) throws IOException, InterruptedException {
        // -H prints each header gcc opens, one dot per nesting level: ". /usr/include/stdio.h" is the direct one.
        String out = run(List.of("gcc", "-x", "c", "-E", "-H", "-o", "/dev/null", "-"), "#include <" + header + ">\n");
        return out.lines().filter(l -> l.startsWith(". ")).map(l -> l.substring(2).strip()).findFirst().orElse(null);
    }

    /** The package dpkg says installed {@code file}, or null. */
    static String owner(String file) throws IOException, InterruptedException {
        String out = run(List.of("dpkg", "-S", file), "");
        // "libc6-dev:amd64: /usr/include/stdio.h"
        return out.lines().skip(1).filter(l -> l.contains(": ")).map(l -> l.substring(0, l.indexOf(": ")))
                .map(p -> p.replaceAll(":.*", "")).findFirst().orElse(null);
    }

    /** The installed packages reachable from {@code roots} through Depends and Pre-Depends. */
    static Set<String> closure(Set<String> roots) throws IOException, InterruptedException {
        String out = run(List.of("dpkg-query", "-W", "-f", "${Package}\\t${Pre-Depends}, ${Depends}\\n"), "");
        Map<String, Set<String>> deps = new HashMap<>();
        out.lines().skip(1).filter(l -> l.contains("\t")).forEach(l -> {
            String[] f = l.split("\t", 2);
            Set<String> d = deps.computeIfAbsent(f[0], k -> new HashSet<>());
            for (String alt : f[1].split("[,|]")) {
                String name = alt.strip().replaceAll("[ (].*", "").replaceAll(":.*", "");
                if (!name.isEmpty()) {
                    d.add(name);
                }
            }
        });
        Set<String> seen = new TreeSet<>(roots);
        ArrayDeque<String> todo = new ArrayDeque<>(roots);
        while (!todo.isEmpty()) {
            for (String d : deps.getOrDefault(todo.pop(), Set.of())) {
                if (seen.add(d)) {
                    todo.push(d);
                }
            }
        }
        return seen;
    }

    /** Header → what is wrong with it, for every header not provided by the closure of {@code listed}. */
    static Map<String, String> unprovided(Set<String> headers, Set<String> listed)
            throws IOException, InterruptedException {
        Set<String> provided = closure(listed);
        Map<String, String> problems = new TreeMap<>();
        for (String h : headers) {
            String file = resolve(h);
            String pkg = file == null ? null : owner(file);
            if (file == null) {
                problems.put(h, "gcc finds no such header on this machine");
            } else if (pkg == null) {
                problems.put(h, file + " belongs to no Debian package");
            } else if (!provided.contains(pkg)) {
                problems.put(h, file + " is in package " + pkg + ", which scripts/lib/packages does not install");
            }
        }
        return problems;
    }

    @Test
    void everyHeaderATestCompilesAgainstComesFromAProvisionedPackage() throws Exception {
        Path repo = repo();
        Set<String> headers = includedHeaders(repo);
        assertThat(headers).as("the layout test's headers are among those scanned")
                .contains("infiniband/verbs.h", "rdma/rdma_cma.h", "stdio.h");
        assertThat(unprovided(headers, listed(repo)))
                .as("headers the tests compile against that provisioning (scripts/lib/packages) does not bring")
                .isEmpty();
    }

    @Test
    void aHeaderFromAnUnlistedPackageIsReported() throws Exception {
        Set<String> withoutRdmacm = new TreeSet<>(listed(repo()));
        withoutRdmacm.remove("librdmacm-dev");
        assertThat(unprovided(Set.of("rdma/rdma_cma.h", "infiniband/verbs.h"), withoutRdmacm))
                .containsOnlyKeys("rdma/rdma_cma.h")
                .hasEntrySatisfying("rdma/rdma_cma.h", why -> assertThat(why).contains("librdmacm-dev"));
        assertThat(unprovided(Set.of("no/such/header-rdma4j.h"), listed(repo())))
                .containsEntry("no/such/header-rdma4j.h", "gcc finds no such header on this machine");
    }

    @Test
    void dependenciesOfListedPackagesCount() throws Exception {
        // stddef.h is gcc's own (libgcc-N-dev), which only gcc's dependencies bring
        String pkg = owner(resolve("stddef.h"));
        assertThat(pkg).isNotNull();
        assertThat(listed(repo())).doesNotContain(pkg);
        assertThat(closure(listed(repo()))).contains(pkg);
    }
}
