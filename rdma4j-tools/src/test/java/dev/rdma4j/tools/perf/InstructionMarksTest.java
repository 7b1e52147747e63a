package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link InstructionMarks} with the marks library that {@code scripts/lib/icount/build} makes (on the host a mark
 * is a NOP: calling it shows it was accepted and is harmless), and with libraries it must refuse before calling
 * anything: a function of the right name but other code, a missing function, no library. gcc is required.
 */
class InstructionMarksTest {
    @TempDir
    Path dir;

    private static void gcc(String... args) throws Exception {
        Process p = new ProcessBuilder(args).inheritIO().start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", args)).isZero();
    }

    @Test
    void theProjectsMarksLoadAndRunAsNops() throws Exception {
        gcc(Path.of("..", "scripts", "lib", "icount", "build").toString(), dir.toString());
        InstructionMarks marks = InstructionMarks.load(dir.resolve("libicount-marks.so"));
        for (int i = 0; i < 3; i++) {
            marks.start();
            marks.poll();
            marks.empty();
            marks.stop();
        }
    }

    @Test
    void aSpinMarkWithAnotherMarksCodeIsRefused() throws Exception {
        Path src = dir.resolve("swapped.c");
        // start and stop right, poll executes the empty mark: the plugin would count every look as spin
        Files.writeString(src, """
                void rdma4j_icount_start(void) { __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x4a, 0x34, 0x52"); }
                void rdma4j_icount_stop(void) { __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x4a, 0x34, 0x52"); }
                void rdma4j_icount_poll(void) { __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x04, 0x4a, 0x34, 0x52"); }
                void rdma4j_icount_empty(void) { __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x04, 0x4a, 0x34, 0x52"); }
                """);
        gcc("gcc", "-O2", "-fcf-protection=none", "-shared", "-fPIC", "-o", dir.resolve("libswapped.so").toString(),
                src.toString());
        assertThatThrownBy(() -> InstructionMarks.load(dir.resolve("libswapped.so")))
                .isInstanceOf(PerfException.class)
                .hasMessageContaining("rdma4j_icount_poll")
                .hasMessageContaining("is not the mark of scripts/lib/icount/marks.c");
    }

    @Test
    void aFunctionWithOtherCodeIsRefusedUncalled() throws Exception {
        Path src = dir.resolve("other.c");
        // were it accepted and called, it would end the JVM: the check must refuse it at load
        Files.writeString(src, """
                #include <stdlib.h>
                void rdma4j_icount_start(void) { abort(); }
                void rdma4j_icount_stop(void) { abort(); }
                """);
        gcc("gcc", "-O2", "-shared", "-fPIC", "-o", dir.resolve("libother.so").toString(), src.toString());
        assertThatThrownBy(() -> InstructionMarks.load(dir.resolve("libother.so")))
                .isInstanceOf(PerfException.class)
                .hasMessageContaining("rdma4j_icount_start")
                .hasMessageContaining("is not the mark of scripts/lib/icount/marks.c");
    }

    @Test
    void aMissingMarkIsRefused() throws Exception {
        Path src = dir.resolve("half.c");
        Files.writeString(src, "void rdma4j_icount_begin(void) { }\n");
        gcc("gcc", "-O2", "-shared", "-fPIC", "-o", dir.resolve("libhalf.so").toString(), src.toString());
        assertThatThrownBy(() -> InstructionMarks.load(dir.resolve("libhalf.so")))
                .isInstanceOf(PerfException.class)
                .hasMessageContaining("has no rdma4j_icount_start");
    }

    @Test
    void noLibraryIsRefused() {
        assertThatThrownBy(() -> InstructionMarks.load(dir.resolve("absent.so")))
                .isInstanceOf(PerfException.class)
                .hasMessageContaining("cannot load");
    }
}
