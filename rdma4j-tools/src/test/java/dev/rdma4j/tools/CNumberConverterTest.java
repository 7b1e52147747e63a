package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CNumberConverterTest {

    @Test
    void readsNumbersLikeStrtolBaseZero() {
        assertThat(CNumberConverter.parse("18515")).isEqualTo(18515);
        assertThat(CNumberConverter.parse("0x10")).isEqualTo(16);
        assertThat(CNumberConverter.parse("0X1f")).isEqualTo(31);
        assertThat(CNumberConverter.parse("010")).isEqualTo(8);
        assertThat(CNumberConverter.parse("09")).isZero(); // octal stops at 9
        assertThat(CNumberConverter.parse("0")).isZero();
        assertThat(CNumberConverter.parse("0x")).isZero();
        assertThat(CNumberConverter.parse("12abc")).isEqualTo(12);
        assertThat(CNumberConverter.parse("abc")).isZero();
        assertThat(CNumberConverter.parse("")).isZero();
        assertThat(CNumberConverter.parse("  -1")).isEqualTo(-1);
        assertThat(CNumberConverter.parse("+7")).isEqualTo(7);
        assertThat(CNumberConverter.parse("99999999999999999999")).isEqualTo(Long.MAX_VALUE);
        assertThat(CNumberConverter.parse("-99999999999999999999")).isEqualTo(Long.MIN_VALUE);
    }
}
