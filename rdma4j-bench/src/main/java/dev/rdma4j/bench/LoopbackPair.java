package dev.rdma4j.bench;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionHandler;

/**
 * Two RC queue pairs on one device connected to each other (the device loops back), public API only: a CQ
 * each (the engine's when one is given), one region for everything. The device is {@code RDMA4J_DEVICE}, else
 * the first. Public for the benchmarks in package {@code dev.rdma4j} too; not thread-safe.
 */
public final class LoopbackPair implements AutoCloseable {
    /** The device's context. */
    public final Context ctx;
    /** The protection domain of everything. */
    public final ProtectionDomain pd;
    /** Queue pair {@link #a}'s CQ. */
    public final CompletionQueue cqA;
    /** Queue pair {@link #b}'s CQ. */
    public final CompletionQueue cqB;
    /** One side, connected to {@link #b}. */
    public final QueuePair a;
    /** The other side. */
    public final QueuePair b;
    /** 1 MiB, local write, remote read and write. */
    public final MemoryRegion mr;

    /**
     * Opens the device, connects the pair.
     *
     * @param depth  each queue's capacity
     * @param engine the engine whose CQs to use, or null for plain CQs
     * @throws VerbsException if a verb fails
     */
    public LoopbackPair(int depth, CompletionEngine engine) throws VerbsException {
        this(depth, engine, 0);
    }

    /**
     * Opens the device, connects the pair, whose QPs take {@code maxInlineData} bytes inline.
     *
     * @param depth         each queue's capacity
     * @param engine        the engine whose CQs to use, or null for plain CQs
     * @param maxInlineData {@code cap.max_inline_data} of both QPs
     * @throws VerbsException if a verb fails
     */
    public LoopbackPair(int depth, CompletionEngine engine, int maxInlineData) throws VerbsException {
        this(depth, engine, maxInlineData, null);
    }

    /**
     * Opens the device, connects the pair; with {@code handler}, the engine's CQs hand their completions to it
     * ({@link CompletionEngine#createCompletionQueueWithHandler}).
     *
     * @param depth         each queue's capacity
     * @param engine        the engine whose CQs to use, or null for plain CQs
     * @param maxInlineData {@code cap.max_inline_data} of both QPs
     * @param handler       the CQs' completion handler (needs {@code engine}), or null
     * @throws VerbsException if a verb fails
     */
    public LoopbackPair(int depth, CompletionEngine engine, int maxInlineData, CompletionHandler handler)
            throws VerbsException {
        ctx = Device.byNameOrDefault(null).open();
        pd = ctx.allocateProtectionDomain();
        int cqSize = 2 * depth + 16;
        cqA = cq(engine, handler, cqSize);
        cqB = cq(engine, handler, cqSize);
        a = QueuePair.builder(pd, QpType.RC).completionQueue(cqA).capacity(depth, depth).maxInlineData(maxInlineData)
                .build();
        b = QueuePair.builder(pd, QpType.RC).completionQueue(cqB).capacity(depth, depth).maxInlineData(maxInlineData)
                .build();
        QpEndpoint ea = a.localEndpoint(0x1111);
        QpEndpoint eb = b.localEndpoint(0x2222);
        a.connect(eb, 0x1111);
        b.connect(ea, 0x2222);
        mr = pd.allocate(1 << 20, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ);
    }

    private CompletionQueue cq(CompletionEngine engine, CompletionHandler handler, int size) throws VerbsException {
        if (engine == null) {
            return ctx.createCompletionQueue(size);
        }
        return handler != null ? engine.createCompletionQueueWithHandler(ctx, size, handler)
                : engine.createCompletionQueue(ctx, size);
    }

    /** Polls {@code cq} until {@code n} completions came, all successful. */
    static void await(CompletionQueue cq, WorkCompletions wcs, int n) throws VerbsException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        int seen = 0;
        while (seen < n) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                if (!wcs.isSuccess(i)) {
                    throw new IllegalStateException("completion failed: " + wcs.get(i));
                }
            }
            seen += got;
            if (got == 0 && System.nanoTime() > deadline) {
                throw new IllegalStateException("waited 60 s for " + n + " completions, got " + seen);
            }
        }
    }

    @Override
    public void close() {
        a.close();
        b.close();
        cqA.close();
        cqB.close();
        mr.close();
        pd.close();
        ctx.close();
    }
}
