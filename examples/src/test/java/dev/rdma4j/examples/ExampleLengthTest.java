package dev.rdma4j.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 10: each echo example is at most 30 lines of code. Counted as a reader would: every line but blank
 * ones, imports and lines that hold only a comment (the package line and closing braces count).
 */
class ExampleLengthTest {
    static final int MAX = 30;

    @ParameterizedTest
    @ValueSource(strings = {"EchoServer", "EchoClient", "TcpEchoServer", "TcpEchoClient"})
    void anEchoExampleIsAtMost30LinesOfCode(String example) throws IOException {
        Path source = Path.of("src/main/java/dev/rdma4j/examples", example + ".java");
        int lines = linesOfCode(Files.readAllLines(source));
        System.out.println(example + ": " + lines + " lines of code");
        assertThat(lines).as("lines of code of %s", source).isLessThanOrEqualTo(MAX).isGreaterThan(10);
    }

    @Test
    void theCountSeesCodeAndSkipsTheRest() {
        List<String> sample = List.of("package a;", "", "import b.C;", "/** doc", " * more", " */",
                "class X { // a comment after code counts", "    // only a comment", "    int x;", "}");
        assertThat(linesOfCode(sample)).isEqualTo(4);
    }

    static int linesOfCode(List<String> lines) {
        int n = 0;
        boolean inComment = false;
        for (String raw : lines) {
            String line = raw.strip();
            if (inComment) {
                inComment = !line.contains("*/");
                if (inComment || line.endsWith("*/")) {
                    continue;
                }
                line = line.substring(line.indexOf("*/") + 2).strip();
            }
            if (line.startsWith("/*")) {
                inComment = !line.contains("*/");
                continue;
            }
            if (line.isEmpty() || line.startsWith("import ") || line.startsWith("//")) {
                continue;
            }
            n++;
        }
        return n;
    }
}
