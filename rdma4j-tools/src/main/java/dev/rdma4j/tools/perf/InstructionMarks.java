package dev.rdma4j.tools.perf;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The marks between which {@code scripts/perf-compare --icount} counts a guest's instructions: the functions
 * {@code rdma4j_icount_start} and {@code rdma4j_icount_stop} of a library built from
 * {@code scripts/lib/icount/marks.c}, each one instruction that the QEMU plugin {@code scripts/lib/icount/icount.c}
 * recognises (a NOP anywhere else). {@code rdma4j perf --icount-marks LIB} executes them around each measured
 * size, so the count covers the measured iterations and nothing of the start-up, the JIT's warm-up or the report.
 * Two more, {@code rdma4j_icount_poll} and {@code rdma4j_icount_empty}, go around a look of a busy wait that is no
 * CQ poll ({@code write_lat}'s spin on memory): the plugin leaves out the rounds from an empty look to the next
 * look, as it leaves out busy polling's empty polls of a CQ, so that the count is the code's work and not the
 * time the peer took.
 *
 * <p>Safety: before the first call each function's code is read and compared with the one it must be (the mark,
 * then {@code ret}), so a wrong library is refused with a {@link PerfException}, never called.
 *
 * <p>Public for the measuring programs outside this package ({@code net-pingpong}, rdma4j-bench's
 * {@code NettyEchoCount}); not an API of the library.
 *
 * <p>Threading: the measuring thread only; a mark is a call of a few instructions and allocates nothing.
 */
@SuppressWarnings("restricted") // a library's four functions, checked byte by byte before they are called
public final class InstructionMarks {
    /** {@code nopl 0x52344a01(%rax); ret}; the other marks differ in the displacement's low byte: marks.c, icount.c. */
    private static final byte[] START_CODE = {0x0f, 0x1f, (byte) 0x80, 0x01, 0x4a, 0x34, 0x52, (byte) 0xc3};
    private static final int DISPLACEMENT_LOW_BYTE = 3;

    private static final String[] NAMES = {"rdma4j_icount_start", "rdma4j_icount_stop", "rdma4j_icount_poll",
        "rdma4j_icount_empty"};

    private final MethodHandle start;
    private final MethodHandle stop;
    private final MethodHandle poll;
    private final MethodHandle empty;

    private InstructionMarks(MethodHandle[] marks) {
        this.start = marks[0];
        this.stop = marks[1];
        this.poll = marks[2];
        this.empty = marks[3];
    }

    /**
     * Loads the marks of {@code library} for the life of the process.
     *
     * @param library the marks library, e.g. {@code build/icount/libicount-marks.so}
     * @return its marks
     * @throws PerfException if it cannot be loaded or lacks a mark
     */
    public static InstructionMarks load(Path library) throws PerfException {
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new PerfException("--icount-marks: cannot load " + library + ": " + e.getMessage());
        }
        Linker linker = Linker.nativeLinker();
        FunctionDescriptor none = FunctionDescriptor.ofVoid();
        MethodHandle[] marks = new MethodHandle[NAMES.length];
        for (int i = 0; i < NAMES.length; i++) {
            String name = NAMES[i];
            MemorySegment function = lookup.find(name).orElseThrow(
                    () -> new PerfException("--icount-marks: " + library + " has no " + name));
            byte[] expected = START_CODE.clone();
            expected[DISPLACEMENT_LOW_BYTE] = (byte) (i + 1);
            byte[] code = function.reinterpret(expected.length).toArray(ValueLayout.JAVA_BYTE);
            if (!Arrays.equals(code, expected)) {
                throw new PerfException("--icount-marks: " + name + " in " + library
                        + " is not the mark of scripts/lib/icount/marks.c (code " + hex(code) + ")");
            }
            marks[i] = linker.downcallHandle(function, none, Linker.Option.critical(false));
        }
        return new InstructionMarks(marks);
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (byte b : bytes) {
            s.append(String.format("%02x ", b & 0xff));
        }
        return s.toString().trim();
    }

    /** Executes the start mark. */
    public void start() {
        invoke(start);
    }

    /** Executes the stop mark. */
    public void stop() {
        invoke(stop);
    }

    /** Executes the poll mark: before each look of a busy wait. */
    public void poll() {
        invoke(poll);
    }

    /** Executes the empty mark: after a look of a busy wait that found nothing. */
    public void empty() {
        invoke(empty);
    }

    private static void invoke(MethodHandle mark) {
        try {
            mark.invokeExact();
        } catch (Throwable t) { // a void() function of one NOP throws nothing
            throw new IllegalStateException("icount mark failed", t);
        }
    }
}
