package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * {@link WorkRing}'s book-keeping across many wraps, at capacities that are and are not powers of two (its
 * slots are a power of two, at least the capacity): every completion returns its own request's wr_id, retires
 * the unsignaled requests before it, and the free count stays exact.
 */
class WorkRingTest {
    @Test
    void everyCompletionFindsItsRequestAcrossWraps() {
        for (int capacity : new int[] {1, 2, 3, 5, 7, 8, 100, 128, 129}) {
            WorkRing ring = new WorkRing(capacity, 1);
            long wrId = 1_000;
            for (int round = 0; round < 50; round++) {
                // fill the ring, then complete it in steps of up to 3 (the earlier ones retired unsignaled)
                long first = ring.head();
                for (int k = 0; k < capacity; k++) {
                    ring.claim(wrId + k, null, 0);
                }
                assertThat(ring.free()).as("capacity %d full", capacity).isZero();
                long seq = first;
                while (seq < first + capacity) {
                    long last = Math.min(seq + 2, first + capacity - 1);
                    long got = ring.complete(last & WorkRequestIds.SEQ_MASK, null, 0);
                    assertThat(got).as("capacity %d, request %d", capacity, last).isEqualTo(wrId + (last - first));
                    seq = last + 1;
                    assertThat(ring.free()).isEqualTo((int) (capacity - (first + capacity - seq)));
                }
                assertThat(ring.outstanding()).isZero();
                wrId += capacity;
            }
        }
    }

    @Test
    void anUnclaimedRequestGivesItsSlotBack() {
        WorkRing ring = new WorkRing(3, 1);
        long a = ring.claim(7, null, 0);
        long b = ring.claim(8, null, 0);
        ring.unclaim(b);
        assertThat(ring.free()).isEqualTo(2);
        long c = ring.claim(9, null, 0);
        assertThat(c).isEqualTo(b);
        assertThat(ring.complete(c & WorkRequestIds.SEQ_MASK, null, 0)).isEqualTo(9);
        assertThat(ring.free()).isEqualTo(3);
        assertThat(a).isLessThan(c);
    }

    @Test
    void aQueueBeyondTwoToTheThirtyIsRefused() {
        assertThatThrownBy(() -> new WorkRing((1 << 30) + 1, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
