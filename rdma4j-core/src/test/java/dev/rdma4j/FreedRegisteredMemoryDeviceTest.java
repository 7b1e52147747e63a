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

    /**
     * Child: the escape hatch misused. {@code registerUnsafe} of a segment of the caller's arena, which
     * the caller then closes before posting into it: every work request naming the region is refused,
     * and the region still closes.
     */
    public static final class UnsafeRegionPostedAfterItsArenaClosed {
        public static void main(String[] args) throws Exception {
            try (Loopback l = new Loopback(QpType.RC)) {
                Arena arena = Arena.ofShared();
                MemoryRegion mr = l.pd.registerUnsafe(arena.allocate(SIZE), AccessFlag.LOCAL_WRITE);
                arena.close(); // too early: the caller broke registerUnsafe's contract
                System.out.println("arena closed while registered");
                try (ReceiveBatch batch = new ReceiveBatch(1, 1)) {
                    for (int i = 0; i < ROUNDS; i++) {
                        try {
                            if (i % 2 == 0) {
                                l.b.postReceive(i, mr, 0, SIZE);
                            } else {
                                l.b.post(batch.clear().receive(i, mr, 0, SIZE));
                            }
                            System.out.println("posted into freed memory");
                        } catch (IllegalStateException e) {
                            System.out.println("post: " + e.getClass().getName() + ": " + e.getMessage());
                        }
                    }
                }
                try {
                    l.a.postSend(2, mr, 0, SIZE);
                    System.out.println("sent from freed memory");
                } catch (IllegalStateException e) {
                    System.out.println("send: " + e.getClass().getName() + ": " + e.getMessage());
                }
                mr.close();
                System.out.println("region closed: " + mr.isClosed());
            }
            System.out.println("alive");
        }
    }

    @Test
    void anUnsafeRegionWhoseArenaWasClosedIsRefusedInWorkRequests(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, UnsafeRegionPostedAfterItsArenaClosed.class).survived();
        assertThat(child.output()).contains("arena closed while registered").contains("region closed: true")
                .contains("alive").doesNotContain("posted into freed memory").doesNotContain("sent from freed memory")
                .contains("send: java.lang.IllegalStateException: MemoryRegion(16384 bytes, registerUnsafe): its "
                        + "memory was freed while registered");
        assertThat(child.output().lines().filter(l -> l.startsWith("post: java.lang.IllegalStateException: "
                + "MemoryRegion(16384 bytes, registerUnsafe): its memory was freed while registered"))).hasSize(ROUNDS);
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
