package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Which memory {@code ProtectionDomain.register} may take (issue 9): only memory that stays allocated while
 * the region keeps its segment reachable. On the host, so a JDK that renames its scope classes is noticed
 * without a device.
 */
class RegisteredMemoryLifetimeTest {

    @Test
    @SuppressWarnings("restricted")
    void memoryTheGcFreesOnlyWhenUnreachableLivesWhileReachable() {
        ByteBuffer direct = ByteBuffer.allocateDirect(4096);
        assertThat(MemoryRegion.livesWhileReachable(Arena.ofAuto().allocate(64))).isTrue();
        assertThat(MemoryRegion.livesWhileReachable(Arena.global().allocate(64))).isTrue();
        assertThat(MemoryRegion.livesWhileReachable(MemorySegment.ofBuffer(direct))).isTrue();
        assertThat(MemoryRegion.livesWhileReachable(MemorySegment.ofBuffer(direct.slice(100, 200)))).isTrue();
        assertThat(MemoryRegion.livesWhileReachable(MemorySegment.ofAddress(4096).reinterpret(64))).isTrue();
    }

    @Test
    @SuppressWarnings("restricted")
    void memoryOfAnArenaTheCallerCanCloseDoesNot() {
        try (Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            assertThat(MemoryRegion.livesWhileReachable(confined.allocate(64))).isFalse();
            assertThat(MemoryRegion.livesWhileReachable(shared.allocate(64))).isFalse();
            assertThat(MemoryRegion.livesWhileReachable(shared.allocate(64).asSlice(8))).isFalse();
            assertThat(MemoryRegion.livesWhileReachable(MemorySegment.ofBuffer(shared.allocate(64).asByteBuffer())))
                    .isFalse();
            assertThat(MemoryRegion.livesWhileReachable(Arena.ofAuto().allocate(64).reinterpret(shared, null)))
                    .isFalse();
        }
    }
}
