package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README is for a newcomer (issue 33): at most 12 KB (12,000 bytes, so that either reading of "KB" holds), a
 * runnable example near the top that compiles against this module's classes, and every relative link of the README
 * and of {@code docs/*.md} leads somewhere: the file exists and, for a {@code #anchor}, one of its headings has that
 * GitHub anchor.
 */
class ReadmeTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    @Test
    void isShort() throws IOException {
        assertThat(Files.size(ROOT.resolve("README.md"))).as("README.md's size in bytes").isLessThanOrEqualTo(12_000);
    }

    @Test
    void startsItsExampleBeforeLine40() throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
        int first = lines.indexOf("```java") + 1;
        assertThat(first).as("the line of the README's first ```java block").isBetween(1, 39);
    }

    @Test
    void exampleCompiles(@TempDir Path out) throws IOException {
        String source = javaBlocks(Files.readString(ROOT.resolve("README.md"))).getFirst();
        Matcher name = Pattern.compile("public\\s+(?:final\\s+)?class\\s+(\\w+)").matcher(source);
        assertThat(name.find()).as("a public class in the README's first java block").isTrue();
        Path file = Files.writeString(out.resolve(name.group(1) + ".java"), source);
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        StringWriter messages = new StringWriter();
        PrintWriter print = new PrintWriter(messages);
        int status = javac.run(print, print, "-d", out.toString(), "-proc:none",
                "-cp", Path.of("target", "classes").toAbsolutePath().toString(), file.toString());
        print.flush();
        assertThat(status).as("javac on the README's example:%n%s", messages).isZero();
    }

    @Test
    void relativeLinksResolve() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            for (String target : links(Files.readString(page))) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // https:, mailto:
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path to = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(to)) {
                    broken.add(page + ": " + target + " (no " + to + ")");
                } else if (hash >= 0) {
                    Set<String> known = anchors.computeIfAbsent(to, ReadmeTest::anchorsOf);
                    if (!known.contains(target.substring(hash + 1))) {
                        broken.add(page + ": " + target + " (no such heading in " + to + ")");
                    }
                }
            }
        }
        assertThat(broken).as("links whose target does not exist").isEmpty();
    }

    @Test
    void readsGitHubAnchors() {
        assertThat(anchors("# A\n## The guest: `scripts/softroce`\n```sh\n# not a heading\n```\n## A\n"))
                .containsExactlyInAnyOrder("a", "the-guest-scriptssoftroce", "a-1");
    }

    private static List<String> javaBlocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        StringBuilder block = null;
        for (String line : markdown.split("\n", -1)) {
            if (block == null && line.equals("```java")) {
                block = new StringBuilder();
            } else if (block != null && line.startsWith("```")) {
                blocks.add(block.toString());
                block = null;
            } else if (block != null) {
                block.append(line).append('\n');
            }
        }
        return blocks;
    }

    /** The link targets of a page's text outside code blocks. */
    private static List<String> links(String markdown) {
        List<String> targets = new ArrayList<>();
        boolean code = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                code = !code;
            } else if (!code) {
                Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
                while (m.find()) {
                    targets.add(m.group(1));
                }
            }
        }
        return targets;
    }

    private static Set<String> anchorsOf(Path page) {
        try {
            return anchors(Files.readString(page, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean code = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                code = !code;
                continue;
            }
            Matcher h = HEADING.matcher(line);
            if (code || !h.matches()) {
                continue;
            }
            String slug = h.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }
}
