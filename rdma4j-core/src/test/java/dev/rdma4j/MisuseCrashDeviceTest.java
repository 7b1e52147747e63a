package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.engine.AsyncQueuePair;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Call sequences that once crashed the JVM (issue 9), each run in a child JVM on the device: the child
 * must print the documented exception and exit normally, leaving no {@code hs_err} file.
 */
@Tag("device")
class MisuseCrashDeviceTest {

    /** Child: sends on a UD queue pair without an address handle, plainly and through the engine. */
    public static final class UdSendWithoutAddressHandle {
        public static void main(String[] args) throws Exception {
            try (Loopback l = new Loopback(QpType.UD); MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
                try {
                    l.a.postSend(1, mr, 0, 64);
                    System.out.println("posted");
                } catch (Exception e) {
                    System.out.println("plain: " + e.getClass().getName() + ": " + e.getMessage());
                }
                try (SendBatch b = new SendBatch(2, 1)) {
                    b.send(2, mr, 0, 8).send(3, mr, 8, 8);
                    System.out.println("batch: rc=" + l.a.tryPost(b) + " failedIndex=" + b.failedIndex());
                }
                try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                        CompletionQueue cq = engine.createCompletionQueue(l.ctx, 16)) {
                    QueuePair ud = QueuePair.builder(l.pd, QpType.UD).completionQueue(cq).build();
                    try {
                        ud.toInit();
                        ud.toRtr();
                        ud.toRts(RtsAttributes.builder(0).build());
                        AsyncQueuePair aq = engine.wrap(ud);
                        try {
                            aq.sendAsync(mr, 0, 64).get(60, TimeUnit.SECONDS);
                            System.out.println("async: completed");
                        } catch (Exception e) {
                            Throwable c = e.getCause() != null ? e.getCause() : e;
                            System.out.println("async: " + c.getClass().getName() + ": " + c.getMessage());
                        }
                    } finally {
                        ud.close();
                    }
                }
            }
            System.out.println("alive");
        }
    }

    @Test
    void udSendWithoutAnAddressHandleIsRefusedNotACrash(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, UdSendWithoutAddressHandle.class).survived();
        assertThat(child.output()).contains("alive")
                .contains("plain: dev.rdma4j.VerbsException: ibv_post_send")
                .contains("batch: rc=22 failedIndex=0")
                .contains("async: dev.rdma4j.VerbsException: ibv_post_send");
        assertThat(child.output().lines().filter(l -> l.startsWith("plain:") || l.startsWith("async:")))
                .allMatch(l -> l.contains("UD sends need an address handle"));
    }

    @Test
    void requestsTheQueuePairTypeCannotTakeAreRefusedBeforeTheProvider() throws Exception {
        try (Loopback l = new Loopback(QpType.UC); MemoryRegion mr = l.pd.allocate(4096, AccessFlag.LOCAL_WRITE,
                AccessFlag.REMOTE_READ, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_ATOMIC); SendBatch b = new SendBatch(2, 1)) {
            b.write(1, mr, 0, 8, mr.remote(), 64).read(2, mr, 8, 8, mr.remote(), 128);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.a.post(b))
                    .isInstanceOf(VerbsException.class)
                    .hasMessageContaining("request 1 of 2: UC queue pairs have no RDMA read or atomics");
            assertThat(b.failedIndex()).isEqualTo(1);
            b.clear().fetchAndAdd(3, mr, 0, mr.remote(), 256, 1);
            assertThat(l.a.tryPost(b)).isEqualTo(22);
            b.clear().write(4, mr, 0, 8, mr.remote(), 64);
            l.a.post(b); // the QP is unharmed: what it can take still goes
            assertThat(l.awaitOne(l.cqA).isSuccess()).isTrue();
        }
    }

    @Test
    void aClosedQueuePairCannotBeWrappedOrDescribed() throws Exception {
        try (Loopback l = new Loopback(QpType.RC); CompletionEngine engine = CompletionEngine.builder().build()) {
            l.a.close();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.a.localEndpoint(1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.a.localEndpoint(1, 1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> engine.wrap(l.a))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
    }
}
