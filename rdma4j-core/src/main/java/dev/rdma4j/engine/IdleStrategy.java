package dev.rdma4j.engine;

import java.util.concurrent.locks.LockSupport;

/**
 * What a polling loop does when a round found no work (Agrona's idea): spin, yield, or park, growing
 * with consecutive idle rounds. {@link #reset()} after work was found.
 *
 * <p>Threading: an instance belongs to one engine thread; not thread-safe.
 */
public interface IdleStrategy {
    /**
     * Called after a round that found {@code workCount} items; idles when it is 0.
     *
     * @param workCount what the round did
     */
    void idle(int workCount);

    /** Work was found: start from the cheapest idling again. */
    void reset();

    /**
     * Whether the strategy has run through its spin and yield phases (the adaptive engine then sleeps in epoll).
     *
     * @return {@code true} once idling has become expensive
     */
    default boolean exhausted() {
        return false;
    }

    /**
     * Spins ({@link Thread#onSpinWait()}) forever: for {@link PollingMode#BUSY_POLL}.
     *
     * @return the strategy
     */
    static IdleStrategy busySpin() {
        return new IdleStrategy() {
            @Override
            public void idle(int workCount) {
                Thread.onSpinWait();
            }

            @Override
            public void reset() {
            }
        };
    }

    /**
     * Spins {@code spins} rounds, yields {@code yields} rounds, then parks from {@code minParkNanos}
     * doubling up to {@code maxParkNanos}.
     *
     * @param spins        rounds of busy spinning
     * @param yields       rounds of {@link Thread#yield()}
     * @param minParkNanos first park
     * @param maxParkNanos longest park
     * @return the strategy
     */
    static IdleStrategy backoff(int spins, int yields, long minParkNanos, long maxParkNanos) {
        return new IdleStrategy() {
            private long rounds;
            private long park = minParkNanos;

            @Override
            public void idle(int workCount) {
                if (workCount > 0) {
                    reset();
                    return;
                }
                rounds++;
                if (rounds <= spins) {
                    Thread.onSpinWait();
                } else if (rounds <= (long) spins + yields) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(park);
                    park = Math.min(maxParkNanos, park * 2);
                }
            }

            @Override
            public void reset() {
                rounds = 0;
                park = minParkNanos;
            }

            @Override
            public boolean exhausted() {
                return rounds > (long) spins + yields;
            }
        };
    }
}
