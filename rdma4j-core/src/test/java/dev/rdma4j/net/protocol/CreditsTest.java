package dev.rdma4j.net.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The credit rules one at a time (the property test checks them together). */
class CreditsTest {
    @Test
    void aDataMessageNeedsADataCredit() {
        Credits c = new Credits(4);
        assertThat(c.canSendData()).isFalse();
        assertThatThrownBy(c::spendData).isInstanceOf(IllegalStateException.class);
        c.received(Immediate.encode(2, 0, 0, Immediate.CONTROL));
        c.spendData();
        c.spendData();
        assertThat(c.canSendData()).isFalse();
    }

    @Test
    void creditsAreOwedUntilTakenAndTheMessageIsDueWhenThePeerMayBeOut() {
        Credits c = new Credits(4);
        c.peerKnows(1);
        c.reposted(true);
        assertThat(c.creditMessageDue()).as("the peer has a credit, 1 of 4 owed").isFalse();
        c.received(0); // the peer spent its credit on a data message
        assertThat(c.creditMessageDue()).as("the peer may be out").isTrue();
        int imm = c.takeGrants(0);
        assertThat(Immediate.dataGrants(imm)).isEqualTo(1);
        assertThat(c.creditMessageDue()).isFalse();
        c.reposted(true);
        c.reposted(true);
        assertThat(c.creditMessageDue()).as("half the receives owed").isTrue();
    }

    @Test
    void theLastControlCreditIsKeptForAMessageThatGrantsDataCredits() {
        Credits c = new Credits(4);
        c.readDone();
        assertThat(c.spendMark(true)).as("reads done, no data granted: one of two").isEqualTo(Immediate.CONTROL);
        c.takeGrants(Immediate.CONTROL);
        c.readDone();
        assertThat(c.spendMark(true)).as("the last one is kept, no data credit either").isEqualTo(-1);
        c.reposted(true);
        assertThat(c.spendMark(false)).as("it grants a data credit").isEqualTo(Immediate.CONTROL);
    }

    @Test
    void anUrgentMarkSpendsADataCreditWhenNoControlCreditMayGo() {
        Credits c = new Credits(4);
        c.peerGranted(1);
        c.spendMark(false);
        c.readDone();
        assertThat(c.spendMark(true)).isZero();
        assertThat(c.sendCredits()).isZero();
        assertThat(c.spendMark(true)).isEqualTo(-1);
    }

    @Test
    void aCloseMaySpendTheLastControlCredit() {
        Credits c = new Credits(4);
        c.spendMark(false);
        assertThat(c.spendLastMark()).isEqualTo(Immediate.CONTROL);
        assertThat(c.controlCredits()).isZero();
        assertThat(c.spendLastMark()).isEqualTo(-1);
    }

    @Test
    void controlCreditsComeBackInTheImmediate() {
        Credits c = new Credits(1);
        c.spendMark(false);
        c.spendLastMark();
        c.received(Immediate.encode(0, 2, 0, 0));
        assertThat(c.controlCredits()).isEqualTo(2);
        assertThat(c.peerCredits()).as("a data message of the peer consumed one of its credits").isEqualTo(-1);
    }
}
