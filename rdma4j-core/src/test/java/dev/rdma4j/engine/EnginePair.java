package dev.rdma4j.engine;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.TestDevice;
import dev.rdma4j.VerbsException;

/** Test fixture: an engine, and two connected RC queue pairs on engine-driven CQs, with a region each. */
final class EnginePair implements AutoCloseable {
    static final AccessFlag[] ALL = {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
        AccessFlag.REMOTE_ATOMIC};

    final Context ctx;
    final CompletionEngine engine;
    final ProtectionDomain pd;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final AsyncQueuePair a;
    final AsyncQueuePair b;
    final MemoryRegion memA;
    final MemoryRegion memB;

    EnginePair(PollingMode mode, int depth) throws VerbsException {
        this(mode, depth, 7);
    }

    EnginePair(PollingMode mode, int depth, int rnrRetry) throws VerbsException {
        this(mode, depth, rnrRetry, false);
    }

    /** @param ownChannels CQs with a completion channel each ({@link CompletionEngine#createCompletionQueueWithOwnChannel}) */
    EnginePair(PollingMode mode, int depth, int rnrRetry, boolean ownChannels) throws VerbsException {
        ctx = TestDevice.device().open();
        engine = CompletionEngine.builder().mode(mode).name("test-engine-" + mode).build();
        pd = ctx.allocateProtectionDomain();
        cqA = ownChannels ? engine.createCompletionQueueWithOwnChannel(ctx, 2 * depth)
                : engine.createCompletionQueue(ctx, 2 * depth);
        cqB = ownChannels ? engine.createCompletionQueueWithOwnChannel(ctx, 2 * depth)
                : engine.createCompletionQueue(ctx, 2 * depth);
        QueuePair qa = QueuePair.builder(pd, QpType.RC).completionQueue(cqA).capacity(depth, depth).build();
        QueuePair qb = QueuePair.builder(pd, QpType.RC).completionQueue(cqB).capacity(depth, depth).build();
        QpEndpoint ea = qa.localEndpoint(100);
        QpEndpoint eb = qb.localEndpoint(200);
        qa.toInit();
        qb.toInit();
        qa.toRtr(RtrAttributes.builder(eb).build());
        qb.toRtr(RtrAttributes.builder(ea).build());
        qa.toRts(RtsAttributes.builder(100).rnrRetry(rnrRetry).build());
        qb.toRts(RtsAttributes.builder(200).rnrRetry(rnrRetry).build());
        a = engine.wrap(qa);
        b = engine.wrap(qb);
        memA = pd.allocate(1 << 20, ALL);
        memB = pd.allocate(1 << 20, ALL);
    }

    @Override
    public void close() {
        a.close();
        b.close();
        memA.close();
        memB.close();
        cqA.close();
        cqB.close();
        pd.close();
        engine.close();
        ctx.close();
    }
}
