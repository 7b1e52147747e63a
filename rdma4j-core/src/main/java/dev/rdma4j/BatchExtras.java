package dev.rdma4j;

import dev.rdma4j.internal.ffi.WrView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a {@link SendBatch} keeps for its rarer requests, made at the first of them: each memory window bind's window,
 * region and range (told of the post: {@link MemoryWindow#bindPosted}), and each atomic write's 8 bytes (native
 * memory the provider reads at {@code ibv_wr_atomic_write}).
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

    /** Request {@code i} is encoded again: true if it was a bind. */
    boolean forgetBind(int i) {
        boolean was = windows[i] != null;
        windows[i] = null;
        regions[i] = null;
        return was;
    }

    void clearBinds() {
        java.util.Arrays.fill(windows, null);
        java.util.Arrays.fill(regions, null);
    }

    /** The binds among the first {@code posted} requests of {@code wrs} were posted: their windows take the keys. */
    void bindsPosted(MemorySegment wrs, int posted) {
        for (int i = 0; i < posted; i++) {
            MemoryWindow w = windows[i];
            if (w != null) {
                w.bindPosted(WrView.bindRkey(wrs, i), regions[i], addresses[i], lengths[i], zeroBased[i]);
            }
        }
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
