package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link VerbsException#of}: the verb, the errno and the C library's text for it (host, libc only). */
class VerbsExceptionTest {
    @Test
    void ofCarriesTheVerbTheErrnoAndItsText() {
        VerbsException e = VerbsException.of("ibv_post_send", 12, "qp 7");
        assertThat(e.verb()).isEqualTo("ibv_post_send");
        assertThat(e.errno()).isEqualTo(12);
        assertThat(e.errnoText()).isEqualTo("Cannot allocate memory");
        assertThat(e).hasMessage("ibv_post_send failed: errno 12 (Cannot allocate memory): qp 7");
    }
}
