package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A window's next key ({@code ibv_inc_rkey}): the low 8 bits advance and wrap, the index above them stays. */
class MemoryWindowKeyTest {
    @Test
    void theConsumersByteAdvancesAndWrapsWithinItself() {
        assertThat(MemoryWindow.nextRkey(0x00012a05)).isEqualTo(0x00012a06);
        assertThat(MemoryWindow.nextRkey(0x00012aff)).isEqualTo(0x00012a00);
        assertThat(MemoryWindow.nextRkey(0xffffffff)).isEqualTo(0xffffff00);
        assertThat(MemoryWindow.nextRkey(0x80000080)).isEqualTo(0x80000081);
    }
}
