package dev.rdma4j.net.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The send buffer ring: filled and posted in order, freed in order whatever order the completions come in. */
class SendSlotsTest {
    @Test
    void buffersAreFilledAndPostedInRingOrder() {
        SendSlots s = new SendSlots(3);
        assertThat(s.fill()).isZero();
        assertThat(s.fill()).isEqualTo(1);
        assertThat(s.staged()).isEqualTo(2);
        assertThat(s.post()).isZero();
        assertThat(s.post()).isEqualTo(1);
        assertThat(s.hasStaged()).isFalse();
        assertThat(s.fill()).isEqualTo(2);
        assertThat(s.hasFree()).isFalse();
        assertThatThrownBy(s::fill).isInstanceOf(IllegalStateException.class);
        s.done(0);
        assertThat(s.fill()).isZero();
    }

    @Test
    void aCompletionOutOfOrderFreesNothingUntilTheOlderOnesComplete() {
        SendSlots s = new SendSlots(2);
        s.fill();
        s.fill();
        s.post();
        s.post();
        s.done(1);
        assertThat(s.hasFree()).as("buffer 0 is still in flight").isFalse();
        assertThat(s.inFlight()).isEqualTo(2);
        s.done(0);
        assertThat(s.isIdle()).isTrue();
        assertThat(s.fill()).isZero();
    }

    @Test
    void aBufferNotInFlightCannotComplete() {
        SendSlots s = new SendSlots(2);
        s.fill();
        assertThatThrownBy(() -> s.done(0)).as("staged, not posted").isInstanceOf(IllegalArgumentException.class);
        s.post();
        s.done(0);
        assertThatThrownBy(() -> s.done(0)).as("twice").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> s.done(5)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anUnfilledBufferIsTheNextFilled() {
        SendSlots s = new SendSlots(2);
        assertThat(s.fill()).isZero();
        s.unfill();
        assertThat(s.isIdle()).isTrue();
        assertThat(s.fill()).isZero();
    }
}
