package dev.rdma4j.tools.demo;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.rdma4j.MemoryRegion;
import java.io.PrintStream;

/** The demo's voice: numbered steps, "verified:" / "MISMATCH:" lines, and byte access to regions. */
final class Narrator {
    private final PrintStream out;
    private boolean allVerified = true;

    Narrator(PrintStream out) {
        this.out = out;
    }

    void step(String title, String detail) {
        out.println();
        out.println("== " + title);
        if (!detail.isEmpty()) {
            out.println("   " + detail);
        }
    }

    void say(String line) {
        out.println("   " + line);
    }

    void verify(String what, boolean ok) {
        out.println("   " + (ok ? "verified: " : "MISMATCH: ") + what);
        allVerified &= ok;
    }

    boolean allVerified() {
        return allVerified;
    }

    PrintStream out() {
        return out;
    }

    static byte[] get(MemoryRegion r, long offset, int length) {
        return r.segment().asSlice(offset, length).toArray(JAVA_BYTE);
    }

    static void put(MemoryRegion r, long offset, byte[] bytes) {
        java.lang.foreign.MemorySegment.copy(bytes, 0, r.segment(), JAVA_BYTE, offset, bytes.length);
    }
}
