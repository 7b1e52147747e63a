package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link WcOpcode#isReceive()}: exactly the two receive opcodes, not rdma4j's {@code UNKNOWN} (whose code, -1, has
 * the receive bit); so {@link WorkCompletions#opcode(int)}'s promise holds, that its opcode's direction is the
 * request's whatever the provider wrote into a failed completion.
 */
class WcOpcodeTest {
    @Test
    void onlyTheReceiveOpcodesAreReceives() {
        for (WcOpcode o : WcOpcode.values()) {
            boolean receive = o == WcOpcode.RECV || o == WcOpcode.RECV_RDMA_WITH_IMM;
            assertThat(o.isReceive()).as(o.name()).isEqualTo(receive);
        }
    }

    @Test
    void aCompletionsOpcodeAlwaysHasItsRequestsDirection() {
        for (WcOpcode provider : WcOpcode.values()) {
            for (boolean receive : new boolean[] {false, true}) {
                assertThat(WorkCompletions.opcodeOf(provider, receive).isReceive())
                        .as("%s from the provider, a %s", provider, receive ? "receive" : "send").isEqualTo(receive);
            }
        }
    }
}
