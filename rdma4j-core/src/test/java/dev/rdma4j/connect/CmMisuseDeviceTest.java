package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.engine.CompletionEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** rdma_cm misuse found by the fuzzer (issue 9). */
@Tag("device")
class CmMisuseDeviceTest {

    /** Each call used to create an rdma_cm event channel, fail to have it watched, and keep its fd. */
    @Test
    void anEventChannelOnAClosedEngineIsRefusedWithoutLeakingItsFd() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().build();
        engine.close();
        long before = openFds();
        for (int i = 0; i < 200; i++) {
            assertThatThrownBy(() -> CmEventChannel.create(engine)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        assertThat(openFds()).as("open fds after 200 refused creations").isLessThanOrEqualTo(before + 2);
    }

    private static long openFds() throws Exception {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
