package dev.rdma4j.engine;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The futures of one async queue pair's outstanding requests, by slot. The wr_id an async request is
 * posted with is {@code generation(16) | slot(32)}, so a late completion of an abandoned slot is
 * recognised and ignored. Which queue pair a completion belongs to is never read from the wr_id: the
 * engine learns it from the core, which recorded it when the request was posted.
 */
final class PendingRequests {
    /** One outstanding request. */
    record Pending(CompletableFuture<WorkCompletion> future, String what, java.util.concurrent.Semaphore room) {
    }

    private final Pending[] slots;
    private final int[] generations;
    private final int[] free;
    private int top;

    PendingRequests(int capacity) {
        slots = new Pending[capacity];
        generations = new int[capacity];
        free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        top = capacity;
    }

    /** A wr_id for a new request, or -1 when all slots are taken. */
    synchronized long allocate(Pending p) {
        if (top == 0) {
            return -1;
        }
        int slot = free[--top];
        slots[slot] = p;
        int gen = generations[slot] = (generations[slot] + 1) & 0xffff;
        return ((long) gen << 32) | slot;
    }

    /** Removes and returns the request of {@code wrId}, or null if it is not (any longer) outstanding. */
    synchronized Pending take(long wrId) {
        int slot = (int) wrId;
        int gen = (int) (wrId >>> 32) & 0xffff;
        if (slot < 0 || slot >= slots.length || slots[slot] == null || generations[slot] != gen) {
            return null;
        }
        Pending p = slots[slot];
        slots[slot] = null;
        free[top++] = slot;
        return p;
    }

    /** Every outstanding request, removed. */
    synchronized List<Pending> takeAll() {
        List<Pending> out = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                out.add(slots[i]);
                slots[i] = null;
                free[top++] = i;
            }
        }
        return out;
    }
}
