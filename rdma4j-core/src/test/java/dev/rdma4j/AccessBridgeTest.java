package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.internal.access.Access;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * The bridge finds every package-private member it reaches by name and type (a renamed or retyped member fails its
 * class initialisation here, on the host, not first on a device), and a call goes through to the member.
 */
class AccessBridgeTest {
    @Test
    void everyHandleResolvesAndACallReachesItsMember() {
        Access access = Access.get();
        assertThat(access).isSameAs(Access.get());
        MemoryRegion mr = MemoryRegion.unregistered(Arena.ofAuto().allocate(64, 8), 1, 2);
        try (SendBatch batch = new SendBatch(2, 1)) {
            batch.send(1, mr, 0, 8).unsignaled().send(2, mr, 8, 8);
            assertThat(access.isSignaled(batch, 0)).as("an unsignaled request").isFalse();
            assertThat(access.isSignaled(batch, 1)).as("a signaled request").isTrue();
        }
    }
}
