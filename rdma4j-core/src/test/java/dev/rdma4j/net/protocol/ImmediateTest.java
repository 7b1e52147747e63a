package dev.rdma4j.net.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The immediate's encoding: each field round-trips, the bits are where rdma4j-netty's wire put them. */
class ImmediateTest {
    @Property
    void everyFieldRoundTrips(@ForAll @IntRange(min = 0, max = 0xFFFF) int data,
            @ForAll @IntRange(min = 0, max = 15) int control, @ForAll @IntRange(min = 0, max = 15) int reads,
            @ForAll boolean rendezvous, @ForAll boolean spent, @ForAll boolean close, @ForAll boolean end) {
        int flags = (rendezvous ? Immediate.RENDEZVOUS : 0) | (spent ? Immediate.CONTROL : 0)
                | (close ? Immediate.CLOSE : 0) | (end ? Immediate.END_OF_STREAM : 0);
        int imm = Immediate.encode(data, control, reads, flags);
        assertThat(Immediate.dataGrants(imm)).isEqualTo(data);
        assertThat(Immediate.controlGrants(imm)).isEqualTo(control);
        assertThat(Immediate.readsDone(imm)).isEqualTo(reads);
        assertThat(Immediate.isRendezvous(imm)).isEqualTo(rendezvous);
        assertThat(Immediate.isData(imm)).isEqualTo(!spent);
        assertThat(Immediate.isClose(imm)).isEqualTo(close);
        assertThat(Immediate.isEndOfStream(imm)).isEqualTo(end);
    }

    @Test
    void theBitsAreTheWiresOfRdma4jNetty() {
        assertThat(Immediate.encode(0xFFFF, 0, 0, 0)).isEqualTo(0x0000FFFF);
        assertThat(Immediate.encode(0, 0xF, 0, 0)).isEqualTo(0x000F0000);
        assertThat(Immediate.encode(0, 0, 0xF, 0)).isEqualTo(0x00F00000);
        assertThat(Immediate.RENDEZVOUS).isEqualTo(1 << 28);
        assertThat(Immediate.CONTROL).isEqualTo(1 << 29);
        assertThat(Immediate.CLOSE).isEqualTo(1 << 30);
        assertThat(Immediate.END_OF_STREAM).isEqualTo(1 << 31);
        assertThat(Immediate.encode(3, 2, 1, Immediate.CONTROL | Immediate.END_OF_STREAM)).isEqualTo(0xA0120003);
    }

    @Test
    void noImmediateIsADataMessageGrantingNothing() {
        assertThat(Immediate.isData(0)).isTrue();
        assertThat(Immediate.dataGrants(0) + Immediate.controlGrants(0) + Immediate.readsDone(0)).isZero();
    }

    @Test
    void outOfRangeCountsAndStrayBitsAreRefused() {
        assertThatThrownBy(() -> Immediate.encode(0x10000, 0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.encode(0, 16, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.encode(0, 0, 16, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.encode(-1, 0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.encode(0, 0, 0, 1 << 24)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void grantsBeyondOneImmediateStayOwed() {
        Credits c = new Credits(100_000);
        for (int i = 0; i < 70_000; i++) {
            c.reposted(true);
        }
        int first = c.takeGrants(0);
        assertThat(Immediate.dataGrants(first)).isEqualTo(0xFFFF);
        assertThat(c.owes()).isTrue();
        assertThat(Immediate.dataGrants(c.takeGrants(0))).isEqualTo(70_000 - 0xFFFF);
        assertThat(c.owes()).isFalse();
        assertThat(c.peerCredits()).isEqualTo(70_000);
    }
}
