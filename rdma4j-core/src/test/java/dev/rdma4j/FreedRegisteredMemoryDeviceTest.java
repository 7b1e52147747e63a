package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9: memory freed while registered. A caller's arena closed while a receive was posted into its
 * registered segment let the device write memory the JVM had reused (a SIGSEGV in a full GC). Each
 * sequence runs in a child JVM on the device, which must print the documented exception and exit
 * normally, leaving no {@code hs_err} file.
 */
@Tag("device")
class FreedRegisteredMemoryDeviceTest {
    static final int SIZE = 16 * 1024;
    static final int ROUNDS = 16;

    /**
     * Child: the sequence of the issue. Registers a segment of the caller's arena ({@code args[0]}:
     * {@code confined} or {@code shared}), posts receives into it, closes the arena, lets the peer send
     * into it and collects garbage.
     */
    public static final class CallerArenaClosedWhileRegistered {
        public static void main(String[] args) throws Exception {
            try (Loopback l = new Loopback(QpType.RC); MemoryRegion src = l.pd.allocate(SIZE)) {
                src.segment().fill((byte) 0xA5); // garbage for whatever reused the freed memory
                Arena arena = args[0].equals("shared") ? Arena.ofShared() : Arena.ofConfined();
                MemorySegment segment = arena.allocate(SIZE);
                MemoryRegion mr;
                try {
                    mr = l.pd.register(segment, AccessFlag.LOCAL_WRITE);
                } catch (IllegalArgumentException | IllegalStateException e) {
                    System.out.println("register: " + e.getClass().getName() + ": " + e.getMessage());
                    arena.close();
                    System.out.println("alive");
                    return;
                }
                for (int i = 0; i < ROUNDS; i++) {
                    l.b.postReceive(i, mr, 0, SIZE);
                }
                arena.close(); // the caller frees the memory the device is about to write
                System.out.println("arena closed while registered");
                for (int i = 0; i < ROUNDS; i++) {
                    l.a.postSend(i, src, 0, SIZE);
                    System.gc(); // the JVM reuses the freed memory while the device writes it
                    l.await(l.cqA, 1);
                    l.await(l.cqB, 1);
                    System.gc();
                }
                mr.close();
                System.out.println("the device wrote freed memory " + ROUNDS + " times");
            }
            System.out.println("alive");
        }
    }

    @Test
    void aConfinedArenaSegmentIsRefusedSoItsCloseCannotFreeRegisteredMemory(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, CallerArenaClosedWhileRegistered.class, "confined").survived();
        assertThat(child.output()).contains("alive").doesNotContain("arena closed while registered")
                .contains("register: java.lang.IllegalArgumentException: ")
                .contains("its arena can be closed while the device uses it");
    }

    @Test
    void aSharedArenaSegmentIsRefusedSoItsCloseCannotFreeRegisteredMemory(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, CallerArenaClosedWhileRegistered.class, "shared").survived();
        assertThat(child.output()).contains("alive").doesNotContain("arena closed while registered")
                .contains("register: java.lang.IllegalArgumentException: ")
                .contains("its arena can be closed while the device uses it");
    }
}
