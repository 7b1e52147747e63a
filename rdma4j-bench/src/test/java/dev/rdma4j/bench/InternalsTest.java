package dev.rdma4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.WorkCompletions;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * {@link Internals} on the host: every handle resolves (a member the core renamed or retyped fails its class
 * initialisation), and the host benchmarks that measure package-private code run their measured path, leaving no pin
 * behind (a region refuses to close while pinned).
 */
class InternalsTest {
    @Test
    void theOwnerIsACoreClassFoundByItsTokenAndItsCompletionRetiresTheRequest() {
        try (Arena arena = Arena.ofShared(); WorkCompletions wcs = new WorkCompletions(1)) {
            MemoryRegion region = Internals.unregisteredRegion(arena.allocate(4096, 4096), 1, 2);
            Object ring = Internals.newWorkRing(4, 1);
            int token = Internals.register(ring, null, false);
            try {
                long seq = Internals.ringClaim(ring, 42, region, 0);
                Internals.ringPin(ring, seq, region);
                Internals.publish();
                assertThat(Internals.outstanding(ring)).isEqualTo(1);
                long wrId = Internals.encode(token, false, seq);
                Object owner = Internals.owner(wrId);
                assertThat(owner.getClass().isHidden()).as("%s", owner.getClass()).isTrue();
                assertThat(owner.getClass().getPackageName()).isEqualTo("dev.rdma4j");
                assertThat(Internals.complete(owner, Internals.isRecv(wrId), Internals.seq(wrId), wcs, 0))
                        .as("the caller's wr_id").isEqualTo(42);
                assertThat(Internals.outstanding(ring)).isZero();
                assertThat(Internals.head(ring)).isEqualTo(1);
            } finally {
                Internals.unregister(token);
            }
            assertThat(Internals.owner(Internals.encode(token, false, 0))).as("unregistered").isNull();
            region.close();
        }
    }

    @Test
    void ringHostBenchRoundTripsHandBackTheCallersWrIds() {
        RingHostBench bench = new RingHostBench();
        bench.setUp();
        try {
            for (long i = 0; i < 1000; i += 2) {
                assertThat(bench.workRing()).isEqualTo(i);
                assertThat(bench.slotTable()).isEqualTo(i + 1);
            }
        } finally {
            bench.tearDown(); // closes the region: refused if a pin leaked
        }
    }

    @Test
    void pinHostBenchKeepsItsWindowAndReleasesEveryPin() {
        PinHostBench bench = new PinHostBench();
        PinHostBench.Shared shared = new PinHostBench.Shared();
        PinHostBench.Queue queue = new PinHostBench.Queue();
        shared.setUp();
        queue.setUp();
        for (long i = 0; i < 1000; i++) {
            assertThat(bench.threads1(shared, queue)).isEqualTo(i);
            assertThat(Internals.outstanding(queue.ring)).isLessThanOrEqualTo(PinHostBench.WINDOW);
        }
        queue.tearDown();
        shared.tearDown(); // refused if a pin leaked
    }
}
