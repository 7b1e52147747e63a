package dev.rdma4j.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The options' defaults, their checks, and the system property that scales the default deadline. */
class RdmaOptionsTest {
    @Test
    void defaultsAreTheDocumentedOnes() {
        String saved = System.clearProperty(RdmaOptions.TIMEOUT_PROPERTY);
        try {
            RdmaOptions o = RdmaOptions.defaults();
            assertThat(o.exchange()).isEqualTo(RdmaOptions.Exchange.RDMA_CM);
            assertThat(o.messageSize()).isEqualTo(4096);
            assertThat(o.receiveBuffers()).isEqualTo(16);
            assertThat(o.sendBuffers()).isEqualTo(16);
            assertThat(o.exposedBytes()).isZero();
            assertThat(o.sharedReceiveQueue()).isFalse();
            assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(30));
            assertThat(o.engine()).isNull();
            assertThat(o.busyPoll()).isFalse();
            assertThat(RdmaOptions.builder().busyPoll(true).build().busyPoll()).isTrue();
            assertThat(o.pollingMode()).isEqualTo(PollingMode.EVENT);
        } finally {
            if (saved != null) {
                System.setProperty(RdmaOptions.TIMEOUT_PROPERTY, saved);
            }
        }
    }

    @Test
    void theSystemPropertyScalesTheDefaultTimeoutAndABadOneIsNamed() {
        String saved = System.getProperty(RdmaOptions.TIMEOUT_PROPERTY);
        try {
            System.setProperty(RdmaOptions.TIMEOUT_PROPERTY, "PT2M");
            assertThat(RdmaOptions.defaults().timeout()).isEqualTo(Duration.ofMinutes(2));
            assertThat(RdmaOptions.builder().timeout(Duration.ofSeconds(5)).build().timeout())
                    .as("an explicit timeout wins").isEqualTo(Duration.ofSeconds(5));
            System.setProperty(RdmaOptions.TIMEOUT_PROPERTY, "120");
            assertThatThrownBy(RdmaOptions::defaults).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("-Ddev.rdma4j.net.timeout=120 is no positive ISO-8601 duration");
            System.setProperty(RdmaOptions.TIMEOUT_PROPERTY, "PT0S");
            assertThatThrownBy(RdmaOptions::defaults).isInstanceOf(IllegalArgumentException.class);
        } finally {
            if (saved == null) {
                System.clearProperty(RdmaOptions.TIMEOUT_PROPERTY);
            } else {
                System.setProperty(RdmaOptions.TIMEOUT_PROPERTY, saved);
            }
        }
    }

    @Test
    void badSizesAreRefusedWithTheirName() {
        assertThatThrownBy(() -> RdmaOptions.builder().messageSize(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("messageSize");
        assertThatThrownBy(() -> RdmaOptions.builder().receiveBuffers(-1))
                .hasMessageContaining("receiveBuffers");
        assertThatThrownBy(() -> RdmaOptions.builder().exposeRegion(-1)).hasMessageContaining("exposeRegion");
        assertThatThrownBy(() -> RdmaOptions.builder().timeout(Duration.ZERO)).hasMessageContaining("positive");
        assertThatThrownBy(() -> RdmaOptions.builder().exchange(null)).isInstanceOf(NullPointerException.class);
    }

    /**
     * The own engine's polling mode is chosen without building an engine; busyPoll (the waiting callers) combines with
     * it; a caller's engine brings its own mode, and naming a mode beside it is refused rather than silently ignored.
     */
    @Test
    void thePollingModeIsTheOwnEnginesAndIsRefusedBesideACallersEngine() throws Exception {
        RdmaOptions busy = RdmaOptions.builder().pollingMode(PollingMode.BUSY_POLL).busyPoll(true).build();
        assertThat(busy.pollingMode()).isEqualTo(PollingMode.BUSY_POLL);
        assertThat(busy.busyPoll()).isTrue();
        assertThat(busy.toString()).contains("busy-polled").contains("engine BUSY_POLL");
        assertThat(RdmaOptions.builder().pollingMode(PollingMode.ADAPTIVE).build().pollingMode())
                .isEqualTo(PollingMode.ADAPTIVE);
        assertThatThrownBy(() -> RdmaOptions.builder().pollingMode(null)).isInstanceOf(NullPointerException.class);
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.ADAPTIVE).name("options-test")
                .build()) {
            assertThat(RdmaOptions.builder().engine(engine).build().pollingMode()).as("the caller's engine's")
                    .isEqualTo(PollingMode.ADAPTIVE);
            RdmaOptions.Builder both = RdmaOptions.builder().pollingMode(PollingMode.BUSY_POLL).engine(engine);
            assertThatThrownBy(both::build).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("pollingMode(BUSY_POLL)").hasMessageContaining("engine(...)");
        }
    }
}
