package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Issue 12 (hostile input): values that do not fit their C fields were truncated silently into them (the
 * fuzzer's list: pkeyIndex 65536 or -1, sgidIndex 257, hopLimit 320 or -1, minRnrTimer 256,
 * maxDestRdAtomic / maxRdAtomic 256 or -1, timeout 256, retryCount 263, rnrRetry -1, PSNs beyond 24 bits,
 * AH port 257, AH sgidIndex 256, serviceLevel 300, dlid 70000). Each is now refused, naming the value.
 */
class AttributeRangesTest {
    private static final QpEndpoint PEER = new QpEndpoint(1, 17, 5, Gid.ZERO);

    @Test
    void rtrValuesOutOfTheirFieldsAreRefused() {
        assertRefused(() -> RtrAttributes.builder(PEER).minRnrTimer(256).build(), "minRnrTimer");
        assertRefused(() -> RtrAttributes.builder(PEER).maxDestRdAtomic(256).build(), "maxDestRdAtomic");
        assertRefused(() -> RtrAttributes.builder(PEER).maxDestRdAtomic(-1).build(), "maxDestRdAtomic");
        assertRefused(() -> RtrAttributes.builder(PEER).sgidIndex(257).build(), "sgidIndex");
        assertRefused(() -> RtrAttributes.builder(PEER).hopLimit(320).build(), "hopLimit");
        assertRefused(() -> RtrAttributes.builder(PEER).hopLimit(-1).build(), "hopLimit");
        assertRefused(() -> RtrAttributes.builder(PEER).serviceLevel(300).build(), "serviceLevel");
        RtrAttributes ok = RtrAttributes.builder(PEER).minRnrTimer(31).maxDestRdAtomic(255).sgidIndex(-1)
                .hopLimit(255).serviceLevel(15).build();
        assertThat(ok.minRnrTimer()).isEqualTo(31);
    }

    @Test
    void rtsValuesOutOfTheirFieldsAreRefused() {
        assertRefused(() -> RtsAttributes.builder(1 << 24).build(), "sqPsn");
        assertRefused(() -> RtsAttributes.builder(-1).build(), "sqPsn");
        assertRefused(() -> RtsAttributes.builder(0).timeout(256).build(), "timeout");
        assertRefused(() -> RtsAttributes.builder(0).retryCount(263).build(), "retryCount");
        assertRefused(() -> RtsAttributes.builder(0).rnrRetry(-1).build(), "rnrRetry");
        assertRefused(() -> RtsAttributes.builder(0).maxRdAtomic(256).build(), "maxRdAtomic");
        assertThat(RtsAttributes.builder(0xffffff).timeout(31).retryCount(7).rnrRetry(7).maxRdAtomic(255).build()
                .sqPsn()).isEqualTo(0xffffff);
    }

    @Test
    void initAndAddressValuesOutOfTheirFieldsAreRefused() {
        assertRefused(() -> new InitAttributes(1, 65536, null, 0), "pkeyIndex");
        assertRefused(() -> new InitAttributes(1, -1, null, 0), "pkeyIndex");
        assertRefused(() -> new AddressHandle.Attributes(257, 0, 0, false, Gid.ZERO, 0, 1, 0, 0), "port");
        assertRefused(() -> new AddressHandle.Attributes(1, 70000, 0, false, Gid.ZERO, 0, 1, 0, 0), "dlid");
        assertRefused(() -> new AddressHandle.Attributes(1, 0, 300, false, Gid.ZERO, 0, 1, 0, 0), "serviceLevel");
        assertRefused(() -> new AddressHandle.Attributes(1, 0, 0, true, Gid.ZERO, 256, 1, 0, 0), "sgidIndex");
        assertRefused(() -> new AddressHandle.Attributes(1, 0, 0, true, Gid.ZERO, -1, 1, 0, 0), "sgidIndex");
        assertRefused(() -> new AddressHandle.Attributes(1, 0, 0, false, Gid.ZERO, 0, 320, 0, 0), "hopLimit");
        assertThat(new AddressHandle.Attributes(1, 0xffff, 15, false, Gid.ZERO, -1, 255, 255, 0xfffff).dlid())
                .isEqualTo(0xffff);
    }

    @Test
    void endpointPsnsBeyond24BitsAreRefused() {
        assertThatThrownBy(() -> new QpEndpoint(1, 17, 1 << 24, Gid.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String what) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith(what + " must be");
    }
}
