package dev.rdma4j.net.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The arrivals a side counts without its lock ({@link Credits#arrived}, {@link Credits#arrivalHint},
 * {@link Credits#arrivalsMatter}): applied together they are the single calls they stand for, and when the hint says
 * they do not matter, applying them lets nothing go that could not go before.
 */
class CreditArrivalsPropertyTest {
    /** An operation on a side's credits, as the transports make them: the state a hint is taken in. */
    enum Op { GRANTED_DATA, GRANTED_CONTROL, RECEIVED_DATA, REPOSTED_DATA, REPOSTED_CONTROL, READ_DONE, SEND, MARK }

    @Provide
    Arbitrary<List<Op>> history() {
        return Arbitraries.of(Op.class).list().ofMaxSize(60);
    }

    private static Credits replay(int receives, List<Op> ops) {
        Credits c = new Credits(receives);
        for (Op op : ops) {
            switch (op) {
                case GRANTED_DATA -> c.received(Immediate.encode(1, 0, 0, Immediate.CONTROL));
                case GRANTED_CONTROL -> c.received(Immediate.encode(0, 1, 0, Immediate.CONTROL));
                case RECEIVED_DATA -> c.received(0);
                case REPOSTED_DATA -> c.reposted(true);
                case REPOSTED_CONTROL -> c.reposted(false);
                case READ_DONE -> c.readDone();
                case SEND -> {
                    if (c.canSendData()) {
                        c.spendData();
                        c.takeGrants(0);
                    }
                }
                case MARK -> {
                    int spend = c.spendMark(false);
                    if (spend >= 0) {
                        c.takeGrants(spend);
                    }
                }
            }
        }
        return c;
    }

    @Property(tries = 3000)
    void arrivalsTheHintSaysDoNotMatterMakeNothingDue(@ForAll("history") List<Op> history,
            @ForAll @IntRange(min = 1, max = 40) int receives, @ForAll boolean dataWaiting,
            @ForAll @IntRange(max = 30) int messages, @ForAll @IntRange(max = 30) int grants,
            @ForAll @IntRange(max = 30) int reposts) {
        Credits c = replay(receives, history);
        long hint = c.arrivalHint(dataWaiting);
        boolean dueBefore = c.creditMessageDue();
        c.arrived(messages, grants, reposts);
        if (!Credits.arrivalsMatter(hint, messages, grants, reposts)) {
            assertThat(dueBefore).as("a due message makes every arrival matter").isFalse();
            assertThat(c.creditMessageDue()).as("a credit message became due (%s)", c).isFalse();
            assertThat(dataWaiting && grants > 0).as("waiting data got a credit").isFalse();
        }
    }

    @Property(tries = 1000)
    void arrivedIsTheSingleCallsItStandsFor(@ForAll("history") List<Op> history,
            @ForAll @IntRange(min = 1, max = 40) int receives,
            @ForAll @Size(max = 20) List<@IntRange(max = 5) Integer> grantsPerMessage,
            @ForAll @IntRange(max = 20) int reposts) {
        Credits together = replay(receives, history);
        Credits oneByOne = replay(receives, history);
        together.arrived(grantsPerMessage.size(), grantsPerMessage.stream().mapToInt(Integer::intValue).sum(),
                reposts);
        for (int g : grantsPerMessage) {
            oneByOne.received(Immediate.encode(g, 0, 0, 0));
        }
        for (int i = 0; i < reposts; i++) {
            oneByOne.reposted(true);
        }
        assertThat(together).hasToString(oneByOne.toString());
    }

    /** The point of it: in a ping-pong's steady state, neither the reply nor its buffer's return matters. */
    @Test
    void aPingPongsReplyAndItsBufferDoNotMatter() {
        Credits c = new Credits(16);
        for (int i = 0; i < 16; i++) {
            c.reposted(true);
        }
        c.takeGrants(0); // the first message granted the 16 receives
        c.received(Immediate.encode(16, 0, 0, Immediate.CONTROL));
        c.spendData(); // the ping, then its reply with a credit, then the reply's buffer back
        c.takeGrants(0);
        long hint = c.arrivalHint(false);
        assertThat(Credits.arrivalsMatter(hint, 1, 1, 0)).isFalse();
        assertThat(Credits.arrivalsMatter(hint, 1, 1, 1)).isFalse();
        assertThat(Credits.arrivalsMatter(hint, 16, 16, 1)).as("the peer may be out: a credit message").isTrue();
        assertThat(Credits.arrivalsMatter(hint, 1, 1, 8)).as("half the receives owed").isTrue();
        assertThat(Credits.arrivalsMatter(c.arrivalHint(true), 1, 1, 0)).as("waiting data got a credit").isTrue();
    }
}
