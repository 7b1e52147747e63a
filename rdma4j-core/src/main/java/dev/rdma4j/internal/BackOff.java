package dev.rdma4j.internal;

import java.util.concurrent.locks.LockSupport;

/**
 * How a close waits for the calls in progress on its object (they take microseconds, rarely more): spins
 * briefly, then yields, then parks 50 µs at a time, so a carrier thread is never spun indefinitely.
 * Not exported.
 */
public final class BackOff {
    private BackOff() {
    }

    /**
     * One wait step.
     *
     * @param spins the steps taken so far
     * @return {@code spins + 1}
     */
    public static int step(int spins) {
        if (spins < 100) {
            Thread.onSpinWait();
        } else if (spins < 200) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(50_000);
        }
        return spins + 1;
    }
}
