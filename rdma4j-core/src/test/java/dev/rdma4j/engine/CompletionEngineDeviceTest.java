package dev.rdma4j.engine;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.RemoteRegion;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The async data path through the completion engine, in each polling mode. */
@Tag("device")
class CompletionEngineDeviceTest {
    private static final long T = 120; // seconds; generous for the emulated guest

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void everyOperationCompletesItsFuture(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 16)) {
            p.memA.segment().asSlice(0, 4096).fill((byte) 7);
            CompletableFuture<WorkCompletion> r = p.b.receiveAsync(p.memB, 0, 4096);
            WorkCompletion s = p.a.sendAsync(p.memA, 0, 1000).get(T, TimeUnit.SECONDS);
            assertThat(s.opcode()).isEqualTo(WcOpcode.SEND);
            assertThat(r.get(T, TimeUnit.SECONDS).byteLength()).isEqualTo(1000);
            assertThat(p.memB.segment().asSlice(0, 1000).toArray(JAVA_BYTE)).containsOnly((byte) 7);

            RemoteRegion remote = p.memB.remote();
            p.a.writeAsync(p.memA, 0, 4096, remote, 8192).get(T, TimeUnit.SECONDS);
            assertThat(p.memB.segment().asSlice(8192, 4096).toArray(JAVA_BYTE)).containsOnly((byte) 7);

            p.memB.segment().asSlice(20_000, 512).fill((byte) 9);
            assertThat(p.a.readAsync(p.memA, 30_000, 512, remote, 20_000).get(T, TimeUnit.SECONDS).opcode())
                    .isEqualTo(WcOpcode.RDMA_READ);
            assertThat(p.memA.segment().asSlice(30_000, 512).toArray(JAVA_BYTE)).containsOnly((byte) 9);

            CompletableFuture<WorkCompletion> imm = p.b.receiveAsync(p.memB, 0, 16);
            p.a.writeWithImmediateAsync(p.memA, 0, 64, remote, 40_000, 77).get(T, TimeUnit.SECONDS);
            assertThat(imm.get(T, TimeUnit.SECONDS).immediateData()).isEqualTo(77);
            CompletableFuture<WorkCompletion> imm2 = p.b.receiveAsync(p.memB, 0, 16);
            p.a.sendWithImmediateAsync(p.memA, 0, 8, 78).get(T, TimeUnit.SECONDS);
            assertThat(imm2.get(T, TimeUnit.SECONDS).immediateData()).isEqualTo(78);

            p.memB.segment().set(JAVA_LONG, 64, 10);
            p.a.fetchAndAddAsync(p.memA, 64, remote, 64, 5).get(T, TimeUnit.SECONDS);
            assertThat(p.memA.segment().get(JAVA_LONG, 64)).isEqualTo(10);
            p.a.compareAndSwapAsync(p.memA, 72, remote, 64, 15, 99).get(T, TimeUnit.SECONDS);
            assertThat(p.memA.segment().get(JAVA_LONG, 72)).isEqualTo(15);
            assertThat(p.memB.segment().get(JAVA_LONG, 64)).isEqualTo(99);
        }
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void blockingFormsWorkFromVirtualThreads(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 64)) {
            int threads = 8;
            int perThread = 20;
            List<Thread> workers = new ArrayList<>();
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                int id = t;
                workers.add(Thread.ofVirtual().start(() -> {
                    try {
                        for (int i = 0; i < perThread; i++) {
                            long off = (id * perThread + i) * 8L;
                            p.memA.segment().set(JAVA_LONG, off, id * 1000L + i);
                            p.a.blocking().write(p.memA, off, 8, p.memB.remote(), off);
                            p.a.blocking().fetchAndAdd(p.memA, 512 * 1024 + id * 8L, p.memB.remote(), 600 * 1024, 1);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread w : workers) {
                assertThat(w.join(java.time.Duration.ofSeconds(T))).isTrue();
            }
            assertThat(errors).isEmpty();
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    assertThat(p.memB.segment().get(JAVA_LONG, (t * perThread + i) * 8L)).isEqualTo(t * 1000L + i);
                }
            }
            assertThat(p.memB.segment().get(JAVA_LONG, 600 * 1024)).isEqualTo((long) threads * perThread);
        }
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void blockingImmediateForms(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 16)) {
            CompletableFuture<WorkCompletion> r1 = p.b.receiveAsync(p.memB, 0, 64);
            assertThat(p.a.blocking().sendWithImmediate(p.memA, 0, 8, 0x1234).opcode()).isEqualTo(WcOpcode.SEND);
            assertThat(r1.get(T, TimeUnit.SECONDS).immediateData()).isEqualTo(0x1234);
            CompletableFuture<WorkCompletion> r2 = p.b.receiveAsync(p.memB, 0, 64);
            p.a.blocking().writeWithImmediate(p.memA, 0, 64, p.memB.remote(), 4096, 0x5678);
            WorkCompletion w = r2.get(T, TimeUnit.SECONDS);
            assertThat(w.opcode()).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(w.immediateData()).isEqualTo(0x5678);
        }
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void failedCompletionsCarryTheirStatus(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 8)) {
            RemoteRegion bad = new RemoteRegion(p.memB.address(), 64, p.memB.rkey() ^ 0x11100);
            CompletableFuture<WorkCompletion> f = p.a.writeAsync(p.memA, 0, 64, bad, 0);
            assertThatThrownBy(() -> f.get(T, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOfSatisfying(WorkRequestException.class, e -> {
                        assertThat(e.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
                        assertThat(e.getMessage()).startsWith("RDMA write failed: REM_ACCESS_ERR (remote access error)");
                    });
            // the QP is in ERROR now: later requests flush
            CompletableFuture<WorkCompletion> after = p.a.sendAsync(p.memA, 0, 8);
            assertThatThrownBy(() -> after.get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(WorkRequestException.class,
                            e -> assertThat(e.status()).isEqualTo(WcStatus.WR_FLUSH_ERR));
            assertThatThrownBy(() -> p.a.blocking().send(p.memA, 0, 8)).isInstanceOf(WorkRequestException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void closingFailsEveryPendingFuture(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 8)) {
            List<CompletableFuture<WorkCompletion>> receives = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                receives.add(p.b.receiveAsync(p.memB, i * 64L, 64));
            }
            assertThatThrownBy(p.memB::close).isInstanceOf(IllegalStateException.class);
            p.b.close();
            for (CompletableFuture<WorkCompletion> r : receives) {
                assertThatThrownBy(() -> r.get(T, TimeUnit.SECONDS)).cause()
                        .isInstanceOfSatisfying(WorkRequestException.class, e -> {
                            assertThat(e.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
                            assertThat(e.getMessage()).contains("queue pair closed");
                        });
            }
            assertThat(p.b.receiveAsync(p.memB, 0, 64)).isCompletedExceptionally();
            // the engine's close fails the other side's pending futures too
            CompletableFuture<WorkCompletion> pendingOnA = p.a.receiveAsync(p.memA, 0, 64);
            p.engine.close();
            assertThatThrownBy(() -> pendingOnA.get(T, TimeUnit.SECONDS)).cause()
                    .hasMessageContaining("completion engine closed");
        }
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void asyncFormsFailFastWhenTheQueueIsFull(PollingMode mode) throws Exception {
        try (EnginePair p = new EnginePair(mode, 4)) {
            int depth = p.b.queuePair().capabilities().maxRecvWr();
            for (int i = 0; i < depth; i++) {
                p.b.receiveAsync(p.memB, 0, 64);
            }
            CompletableFuture<WorkCompletion> over = p.b.receiveAsync(p.memB, 0, 64);
            assertThatThrownBy(() -> over.get(T, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(VerbsException.class, e -> assertThat(e.errno()).isEqualTo(12));
        }
    }
}
