package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/lib/repeat-summary}, the per-test summary of {@code scripts/device-tests --repeat N}, on JUnit XML
 * reports made here: a parameterized test's name holds a space ({@code (String, Path)[1]}), which the summary took
 * for the outcome's field separator: both invocations of a test that passed 3 runs of 3 were one "FAIL -3/3".
 */
class RepeatSummaryScriptTest {
    private static Path repo() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/lib/repeat-summary"))) {
                return p;
            }
        }
        throw new AssertionError("no scripts/lib/repeat-summary above " + Path.of("").toAbsolutePath());
    }

    @Test
    void eachTestIsCountedByItsWholeNameAndAMissingOneFails(@TempDir Path reports) throws Exception {
        for (int run = 1; run <= 3; run++) {
            StringBuilder xml = new StringBuilder("<testsuite>\n");
            xml.append("<testcase name=\"pingPong(String, Path)[1]\" classname=\"a.B\" time=\"1.0\"/>\n");
            xml.append("<testcase name=\"pingPong(String, Path)[2]\" classname=\"a.B\" time=\"1.0\">\n");
            if (run == 2) {
                xml.append("<failure message=\"no\" type=\"java.lang.AssertionError\">no</failure>\n");
            }
            xml.append("</testcase>\n");
            if (run != 3) { // its JVM died in run 3
                xml.append("<testcase name=\"other()\" classname=\"a.B\" time=\"1.0\">\n</testcase>\n");
            }
            xml.append("</testsuite>\n");
            Path dir = Files.createDirectories(reports.resolve("run-" + run));
            Files.writeString(dir.resolve("TEST-junit-jupiter.xml"), xml);
        }
        Process p = new ProcessBuilder("bash", repo().resolve("scripts/lib/repeat-summary").toString(),
                reports.toString(), "3").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out.lines()).containsExactly(
                "FAIL 1/3 a.B#other()",
                "FAIL 1/3 a.B#pingPong(String, Path)[2]",
                "ok   0/3 a.B#pingPong(String, Path)[1]",
                "device tests x3: 1 tests passed every run, 2 failed in at least one run");
    }
}
