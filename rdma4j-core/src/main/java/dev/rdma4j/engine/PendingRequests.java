package dev.rdma4j.engine;

import dev.rdma4j.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The futures (or, for tagged requests, the callers' tags) of one async queue pair's outstanding requests, by slot. The wr_id an async request is
 * posted with is {@code generation(16) | slot(32)}, so a late completion of an abandoned slot is
 * recognised and ignored. Which queue pair a completion belongs to is never read from the wr_id: the
 * engine learns it from the core, which recorded it when the request was posted.
 */
final class PendingRequests {
    /**
     * One outstanding request, or chain of requests posted together: {@code permits} queue slots held, and
     * the index (the wr_id's top 16 bits) of the request whose completion ends it; earlier requests of a
     * chain only report errors. {@code last} shrinks when a chain was posted only in part.
     */
    static final class Pending {
        /** The request's future; null for a tagged request (its tag is kept by slot, its handler by the wrapper). */
        final CompletableFuture<WorkCompletion> future;
        final String what;
        final java.util.concurrent.Semaphore room;
        final int permits;
        volatile int last; // written under the PendingRequests lock

        Pending(CompletableFuture<WorkCompletion> future, String what, java.util.concurrent.Semaphore room) {
            this(future, what, room, 1, 0);
        }

        Pending(CompletableFuture<WorkCompletion> future, String what, java.util.concurrent.Semaphore room,
                int permits, int last) {
            this.future = future;
            this.what = what;
            this.room = room;
            this.permits = permits;
            this.last = last;
        }

        CompletableFuture<WorkCompletion> future() {
            return future;
        }

        String what() {
            return what;
        }

        java.util.concurrent.Semaphore room() {
            return room;
        }

        int permits() {
            return permits;
        }
    }

    /** A taken request and its tag (a tagged request's; 0 for a future's). */
    record Taken(Pending pending, long tag) {
    }

    private final Pending[] slots;
    private final long[] tags;
    private final int[] generations;
    private final int[] free;
    private int top;
    /** Outstanding requests with a future (written under the monitor, read without). */
    private volatile int futures;

    PendingRequests(int capacity) {
        slots = new Pending[capacity];
        tags = new long[capacity];
        generations = new int[capacity];
        free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        top = capacity;
    }

    /** A wr_id for a new request, or -1 when all slots are taken. */
    synchronized long allocate(Pending p) {
        return allocate(p, 0);
    }

    /** A wr_id for a new request tagged {@code tag}, or -1 when all slots are taken. */
    synchronized long allocate(Pending p, long tag) {
        if (top == 0) {
            return -1;
        }
        int slot = free[--top];
        slots[slot] = p;
        if (p.future != null) {
            futures++;
        }
        tags[slot] = tag;
        int gen = generations[slot] = (generations[slot] + 1) & 0xffff;
        return ((long) gen << 32) | slot;
    }

    /**
     * The request of {@code wrId}, or null if it is not (any longer) outstanding; removed unless {@code wrId}
     * names a request of a chain before its last ({@code index(wrId) < p.last}).
     */
    synchronized Pending take(long wrId) {
        int slot = (int) wrId;
        int gen = (int) (wrId >>> 32) & 0xffff;
        if (slot < 0 || slot >= slots.length || slots[slot] == null || generations[slot] != gen) {
            return null;
        }
        Pending p = slots[slot];
        if (index(wrId) < p.last) {
            return p; // a chain goes on
        }
        slots[slot] = null;
        free[top++] = slot;
        if (p.future != null) {
            futures--;
        }
        return p;
    }

    /** How many requests with a future are outstanding (a tagged request has none). */
    int futures() {
        return futures;
    }

    /**
     * The tag of request {@code wrId} (read before {@link #take}, which frees its slot for another request); 0 if
     * it is not outstanding, in which case {@link #take} returns null too, unless the slot was meanwhile taken and
     * given to a new request: then the generation differs, and {@link #take} returns null as well.
     */
    synchronized long tag(long wrId) {
        int slot = (int) wrId;
        return slot >= 0 && slot < slots.length ? tags[slot] : 0;
    }

    static int index(long wrId) {
        return (int) (wrId >>> 48);
    }

    /** A chain was posted only up to request {@code last}: its completion (if it is signaled) ends it. */
    synchronized void truncate(long wrId, int last) {
        Pending p = slots[(int) wrId];
        if (p != null) {
            p.last = last;
        }
    }

    /** Every outstanding request, removed. */
    synchronized List<Taken> takeAll() {
        List<Taken> out = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                out.add(new Taken(slots[i], tags[i]));
                slots[i] = null;
                free[top++] = i;
            }
        }
        futures = 0;
        return out;
    }
}
