package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.ChildJvm;
import dev.rdma4j.engine.CompletionEngine;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rdma_cm misuse found by the fuzzer (issue 9). Sequences that crashed the JVM run in a child JVM on the
 * device, which must print the documented exception and exit normally, leaving no {@code hs_err} file.
 */
@Tag("device")
class CmMisuseDeviceTest {

    /** Child: {@code cm.disconnect-after-close}, then the other calls on a closed connection. */
    public static final class DisconnectAfterClose {
        public static void main(String[] args) throws Exception {
            try (CmPair p = new CmPair()) {
                CmConnection[] c = p.connect();
                c[0].close();
                System.out.println("disconnect: " + CmPair.outcome(c[0]::disconnect));
                System.out.println("close again: " + CmPair.outcome(c[0]::close));
                System.out.println("queue pair closed: " + c[0].queuePair().isClosed());
                System.out.println("disconnected: " + c[0].disconnectedAsync().isDone());
                System.out.println("server disconnected: "
                        + CmPair.outcome(() -> c[1].disconnectedAsync().get(CmPair.T, TimeUnit.SECONDS)));
                c[1].close();
                System.out.println("server disconnect: " + CmPair.outcome(c[1]::disconnect));
            }
            System.out.println("alive");
        }
    }

    @Test
    void disconnectAfterCloseIsRefusedNotACrash(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, DisconnectAfterClose.class).survived();
        assertThat(child.output()).contains("alive")
                .contains("disconnect: java.lang.IllegalStateException: CmConnection(connect to ")
                .contains("server disconnect: java.lang.IllegalStateException: CmConnection(accept")
                .contains("close again: ok").contains("queue pair closed: true").contains("disconnected: true")
                .contains("server disconnected: ok");
        assertThat(child.output().lines().filter(l -> l.contains("disconnect: java.lang.IllegalStateException")))
                .hasSize(2).allMatch(l -> l.contains("rdma_disconnect after close()"));
    }

    /**
     * Child: the channel closed while a listener and connections are open on it. Closing them afterwards
     * used librdmacm's freed channel (rdma_destroy_id reads its fd).
     */
    public static final class ChannelClosedBeforeItsIds {
        public static void main(String[] args) throws Exception {
            try (CmPair p = new CmPair()) {
                p.connect();
                System.out.println("channel: " + CmPair.outcome(p.channel::close));
            }
            System.out.println("alive");
        }
    }

    @Test
    void closingAChannelUnderItsIdsIsRefusedNotACrash(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, ChannelClosedBeforeItsIds.class).survived();
        assertThat(child.output()).contains("alive")
                .contains("channel: java.lang.IllegalStateException: cannot close CmEventChannel")
                .contains("still used by 3 rdma_cm id(s)");
    }

    /**
     * Child: closing a connection (or, with "queue-pair", only its QP, directly) on one thread while another
     * disconnects it and the peer disconnects (the engine thread then answers with rdma_disconnect on the same
     * id), many times.
     */
    public static final class CloseRacesDisconnect {
        public static void main(String[] args) throws Exception {
            int rounds = Integer.parseInt(args[0]);
            boolean qpOnly = args.length > 1 && args[1].equals("queue-pair"); // the QP directly, then the rest
            try (CmPair p = new CmPair()) {
                for (int i = 0; i < rounds; i++) {
                    CmConnection[] c = p.connect();
                    CountDownLatch go = new CountDownLatch(1);
                    Thread disconnector = Thread.ofPlatform().start(() -> {
                        await(go);
                        String o = CmPair.outcome(c[0]::disconnect);
                        boolean expected = o.equals("ok") || o.contains("rdma_disconnect after close()")
                                || o.contains("rdma_disconnect during close()")
                                || qpOnly && o.contains("rdma_disconnect"); // e.g. EINVAL once the QP is gone
                        if (!expected) {
                            System.out.println("unexpected: " + o);
                        }
                    });
                    Thread peer = Thread.ofPlatform().start(() -> {
                        await(go);
                        System.out.print(CmPair.outcome(c[1]::disconnect).equals("ok") ? "" : "peer failed ");
                    });
                    go.countDown();
                    if (qpOnly) {
                        c[0].queuePair().close();
                    } else {
                        c[0].close();
                    }
                    disconnector.join();
                    peer.join();
                    c[0].close();
                    c[1].disconnectedAsync().get(CmPair.T, TimeUnit.SECONDS);
                    c[1].close();
                }
            }
            System.out.println("alive");
        }

        private static void await(CountDownLatch l) {
            try {
                l.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void closeRacingDisconnectsOnTheSameIdIsNotACrash(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, CloseRacesDisconnect.class, "30").survived();
        assertThat(child.output()).contains("alive").doesNotContain("unexpected").doesNotContain("peer failed");
    }

    /**
     * Closing a connection's queue pair directly ({@code rdma_destroy_qp}) while another thread disconnects
     * ({@code rdma_disconnect} moves that QP to ERROR) and the engine thread reads the peer's events: every
     * native call on an id is now serialised, and the QP's destruction excludes the channel's event reading.
     */
    @Test
    void aDirectQueuePairCloseRacingDisconnectsIsNotACrash(@TempDir Path dir) throws Exception {
        ChildJvm child = ChildJvm.run(dir, CloseRacesDisconnect.class, "30", "queue-pair").survived();
        assertThat(child.output()).contains("alive").doesNotContain("unexpected").doesNotContain("peer failed");
    }

    /** Each call used to create an rdma_cm event channel, fail to have it watched, and keep its fd. */
    @Test
    void anEventChannelOnAClosedEngineIsRefusedWithoutLeakingItsFd() throws Exception {
        CompletionEngine engine = CompletionEngine.builder().build();
        engine.close();
        long before = dev.rdma4j.OpenFds.count();
        for (int i = 0; i < 200; i++) {
            assertThatThrownBy(() -> CmEventChannel.create(engine)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        assertThat(dev.rdma4j.OpenFds.count()).as("open fds after 200 refused creations").isLessThanOrEqualTo(before + 2);
    }

}
