package dev.rdma4j;

/**
 * Book-keeping of a shared receive queue's posted receives, which complete in any order (many queue
 * pairs consume them): a free list of slots, each with the caller's wr_id, the buffer of its first
 * scatter entry, and the regions it pins. Preallocated; posting and completing allocate nothing.
 * Producers hold the SRQ's post lock; the consumer is one CQ poller at a time per CQ, but several CQs
 * may complete the same SRQ's receives, so completion takes the table's monitor.
 */
final class SlotTable implements Slots {
    private final int capacity;
    private final int refsPerSlot;
    private final long[] userWrIds;
    private final int[] generations;
    private final MemoryRegion[] bufferRegions;
    private final long[] bufferOffsets;
    private final NativeResource[] refs;
    private final int[] refCounts;
    private final int[] free;
    /** This queue's stripe of the pin counts of the regions its receives use. */
    private final int stripe = NativeResource.pinStripe();
    private int top;

    SlotTable(int capacity, int refsPerSlot) {
        this.capacity = Math.max(1, capacity);
        this.refsPerSlot = Math.max(1, refsPerSlot);
        userWrIds = new long[this.capacity];
        generations = new int[this.capacity];
        bufferRegions = new MemoryRegion[this.capacity];
        bufferOffsets = new long[this.capacity];
        refs = new NativeResource[this.capacity * this.refsPerSlot];
        refCounts = new int[this.capacity];
        free = new int[this.capacity];
        for (int i = 0; i < this.capacity; i++) {
            free[i] = this.capacity - 1 - i;
        }
        top = this.capacity;
    }

    @Override
    public synchronized int free() {
        return top;
    }

    /** A slot for a receive; its 39-bit sequence = generation(15) | slot(24). */
    @Override
    public synchronized long claim(long userWrId, MemoryRegion region, long offset) {
        int slot = free[--top];
        userWrIds[slot] = userWrId;
        bufferRegions[slot] = region;
        bufferOffsets[slot] = offset;
        refCounts[slot] = 0;
        int gen = generations[slot] = (generations[slot] + 1) & 0x7fff;
        return ((long) gen << 24) | slot;
    }

    @Override
    public synchronized void pin(long seq, NativeResource r) {
        int slot = (int) (seq & 0xffffff);
        r.pin(stripe);
        refs[slot * refsPerSlot + refCounts[slot]++] = r;
    }

    @Override
    public synchronized void unclaim(long seq) {
        release((int) (seq & 0xffffff));
    }

    /** A receive completed: record its buffer into {@code wcs[i]}, free the slot, return the caller's wr_id. */
    synchronized long complete(long seq, WorkCompletions wcs, int i) {
        int slot = (int) (seq & 0xffffff);
        int gen = (int) (seq >>> 24) & 0x7fff;
        if (generations[slot] != gen || bufferRegions[slot] == null) {
            return -1; // already released (the SRQ was destroyed meanwhile)
        }
        wcs.buffer(i, bufferRegions[slot], bufferOffsets[slot]);
        long id = userWrIds[slot];
        release(slot);
        return id;
    }

    synchronized void releaseAll() {
        for (int s = 0; s < capacity; s++) {
            if (bufferRegions[s] != null) {
                release(s);
            }
        }
    }

    private void release(int slot) {
        int base = slot * refsPerSlot;
        for (int k = 0; k < refCounts[slot]; k++) {
            refs[base + k].unpin(stripe);
            refs[base + k] = null;
        }
        refCounts[slot] = 0;
        bufferRegions[slot] = null;
        free[top++] = slot;
    }
}
