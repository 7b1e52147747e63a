package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Test fixture: a context, a PD, a CQ per side and two queue pairs of one type connected to each other
 * on the same device (rxe loops back through its netdev). Everything closes in order.
 */
final class Loopback implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(60); // generous: the guest is emulated

    final Context ctx;
    final ProtectionDomain pd;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair a;
    final QueuePair b;
    final WorkCompletions wcs = new WorkCompletions(64);

    Loopback(QpType type) throws VerbsException {
        this(type, q -> q);
    }

    Loopback(QpType type, java.util.function.UnaryOperator<QueuePairBuilder> tune) throws VerbsException {
        this(type, tune, RtsAttributes.builder(0));
    }

    Loopback(QpType type, java.util.function.UnaryOperator<QueuePairBuilder> tune, RtsAttributes.Builder rts)
            throws VerbsException {
        ctx = TestDevice.device().open();
        pd = ctx.allocateProtectionDomain();
        cqA = ctx.createCompletionQueue(64);
        cqB = ctx.createCompletionQueue(64);
        a = tune.apply(QueuePair.builder(pd, type).completionQueue(cqA)).build();
        b = tune.apply(QueuePair.builder(pd, type).completionQueue(cqB)).build();
        if (type == QpType.UD) {
            for (QueuePair q : List.of(a, b)) {
                q.toInit();
                q.toRtr();
                q.toRts(RtsAttributes.builder(0).build());
            }
        } else {
            QpEndpoint ea = a.localEndpoint(0x1111);
            QpEndpoint eb = b.localEndpoint(0x2222);
            a.toInit();
            b.toInit();
            a.toRtr(RtrAttributes.builder(eb).build());
            b.toRtr(RtrAttributes.builder(ea).build());
            a.toRts(rtsFor(rts, 0x1111));
            b.toRts(rtsFor(rts, 0x2222));
        }
    }

    private static RtsAttributes rtsFor(RtsAttributes.Builder template, int psn) {
        RtsAttributes t = template.build();
        return RtsAttributes.builder(psn).timeout(t.timeout()).retryCount(t.retryCount()).rnrRetry(t.rnrRetry())
                .maxRdAtomic(t.maxRdAtomic()).build();
    }

    /** Polls {@code cq} until {@code n} completions arrived (or fails after {@link #TIMEOUT}). */
    List<WorkCompletion> await(CompletionQueue cq, int n) throws VerbsException {
        List<WorkCompletion> out = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (out.size() < n) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                out.add(wcs.get(i));
            }
            if (got == 0) {
                assertThat(System.nanoTime()).as("waiting for %d completion(s), got %s", n, out).isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        return out;
    }

    WorkCompletion awaitOne(CompletionQueue cq) throws VerbsException {
        List<WorkCompletion> l = await(cq, 1);
        assertThat(l).hasSize(1);
        return l.get(0);
    }

    /** Asserts that nothing more arrives on {@code cq} for a short while. */
    void assertQuiet(CompletionQueue cq) throws VerbsException {
        long end = System.nanoTime() + Duration.ofMillis(300).toNanos();
        while (System.nanoTime() < end) {
            assertThat(cq.poll(wcs)).isZero();
        }
    }

    @Override
    public void close() {
        a.close();
        b.close();
        cqA.close();
        cqB.close();
        wcs.close();
        pd.close();
        ctx.close();
    }
}
