package dev.rdma4j.engine;

/** How a {@link CompletionEngine} waits for completions. */
public enum PollingMode {
    /**
     * Sleep in {@code epoll_wait} on the completion channels and wake on CQ events:
     * no CPU while idle, a system call and a wake-up per burst.
     */
    EVENT,
    /** Poll the CQs in a loop with the engine's {@link IdleStrategy}: lowest latency, one core busy. */
    BUSY_POLL,
    /**
     * Poll while there is work; when idle, spin, then yield, then arm the CQs and sleep in epoll as
     * {@link #EVENT} does (Aeron-style back-off).
     */
    ADAPTIVE
}
