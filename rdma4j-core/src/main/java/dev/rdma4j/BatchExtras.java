package dev.rdma4j;

import dev.rdma4j.internal.ffi.WrView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a {@link SendBatch} keeps for its rarer requests, made at the first of them: each memory window bind's window,
 * region and range (told of the post: {@link MemoryWindow#bindPosted}), each local invalidate's window (checked before
 * the post: {@link #unboundInvalidate}; told of it: {@link MemoryWindow#invalidatePosted}), and each atomic write's 8
 * bytes (native memory the provider reads at {@code ibv_wr_atomic_write}).
 *
 * <p>Threading: the batch's (one thread at a time).
 */
final class BatchExtras {
    private final MemoryWindow[] windows;
    private final MemoryRegion[] regions;
    private final long[] addresses;
    private final long[] lengths;
    private final boolean[] zeroBased;
    private final RequestBatch batch;
    private MemorySegment atomicValues;
    /** The request {@link #checkWindowOps} refused last, or -1. */
    private int refused = -1;

    BatchExtras(RequestBatch batch, int capacity) {
        this.batch = batch;
        windows = new MemoryWindow[capacity];
        regions = new MemoryRegion[capacity];
        addresses = new long[capacity];
        lengths = new long[capacity];
        zeroBased = new boolean[capacity];
    }

    void recordBind(int i, MemoryWindow window, MemoryRegion region, long address, long length, boolean zero) {
        windows[i] = window;
        regions[i] = region;
        addresses[i] = address;
        lengths[i] = length;
        zeroBased[i] = zero;
    }

    /** Request {@code i} invalidates {@code window} ({@code regions[i]} stays null: that tells it from a bind). */
    void recordInvalidate(int i, MemoryWindow window) {
        windows[i] = window;
        regions[i] = null;
    }

    /**
     * The key {@code window} has when request {@code i} runs: that of the last bind of it among the requests before
     * {@code i} (written to the window only once the batch is posted; an invalidate keeps the key), else the window's.
     */
    static int keyBefore(SendBatch batch, int i, MemoryWindow window) {
        BatchExtras x = batch.extras;
        for (int j = i - 1; x != null && batch.windowOps != 0 && j >= 0; j--) {
            if (x.windows[j] == window && x.regions[j] != null) {
                return WrView.bindRkey(batch.wrs, j);
            }
        }
        return window.rkey();
    }

    /** Whether the last post's check refused request {@code i}: an invalidate of a window not bound there. */
    boolean refusedInvalidate(int i) {
        return refused == i;
    }

    MemoryWindow window(int i) {
        return windows[i];
    }

    /** Request {@code i} is encoded again: true if it was a bind or an invalidate. */
    boolean forgetWindowOp(int i) {
        boolean was = windows[i] != null;
        windows[i] = null;
        regions[i] = null;
        return was;
    }

    void clearWindowOps() {
        java.util.Arrays.fill(windows, null);
        java.util.Arrays.fill(regions, null);
    }

    /**
     * The first of the first {@code n} requests that invalidates a window not bound on {@code qp} when it runs (by a
     * bind posted on {@code qp} since the queue pair's last reset and no invalidate posted after it, earlier requests
     * of this batch included), or -1. The caller holds {@code qp}'s send lock.
     *
     * <p>Why: rxe (Linux 6.12) takes a local invalidate of a type 2 window in its free state (never bound, or
     * invalidated already) as a bound one and dereferences the queue pair it does not have, in the kernel: the host
     * panics ({@code rxe_invalidate_mw}). A bind posted on the same queue pair runs first; if it fails, the queue pair
     * is in error and the invalidate is flushed, not run.
     */
    int unboundInvalidate(QueuePair qp, int n) {
        for (int i = 0; i < n; i++) {
            MemoryWindow w = windows[i];
            if (w == null || regions[i] != null) {
                continue;
            }
            int j = i - 1;
            while (j >= 0 && windows[j] != w) {
                j--;
            }
            if (j >= 0 ? regions[j] == null : !w.boundOn(qp)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Before a post of the first {@code n} requests on {@code qp}, its send lock held: 0, or {@code EINVAL} with the
     * batch's failed index at the first local invalidate of a window not bound there (nothing may be posted).
     */
    int checkWindowOps(QueuePair qp, int n) {
        int bad = unboundInvalidate(qp, n);
        refused = bad;
        if (bad < 0) {
            return 0;
        }
        batch.failedIndex = bad;
        return dev.rdma4j.internal.ffi.CConstants.EINVAL;
    }

    /**
     * After a post on {@code qp} that reached the provider: the window requests posted (all {@code n} when {@code rc}
     * is 0, else those before the one the provider refused) bind or unbind their windows, in order.
     *
     * @return {@code rc}
     */
    int windowOpsPosted(int rc, int n, QueuePair qp) {
        int posted = rc == 0 ? n : Math.max(0, batch.failedIndex);
        for (int i = 0; i < posted; i++) { // in order: binds give their windows the keys, invalidates unbind them
            MemoryWindow w = windows[i];
            if (w != null && regions[i] == null) {
                w.invalidatePosted(qp);
            } else if (w != null) {
                w.bindPosted(WrView.bindRkey(batch.wrs, i), regions[i], addresses[i], lengths[i], zeroBased[i], qp);
            }
        }
        return rc;
    }

    /** Request {@code i}'s 8 atomic-write bytes now hold {@code value} (native memory of the batch's own). */
    void atomicValue(int i, long value) {
        if (atomicValues == null) {
            atomicValues = batch.allocateOwn(8L * windows.length);
        }
        atomicValues.set(ValueLayout.JAVA_LONG, 8L * i, value);
    }

    /** The address of request {@code i}'s 8 atomic-write bytes ({@code ibv_wr_atomic_write}'s {@code atomic_wr}). */
    long atomicValueAddress(int i) {
        return atomicValues.address() + 8L * i;
    }
}
