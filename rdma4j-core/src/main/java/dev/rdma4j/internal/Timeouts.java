package dev.rdma4j.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * How every public call that takes a {@link Duration} reads it (issue 29): {@code null} is a
 * {@link NullPointerException}, a negative duration an {@link IllegalArgumentException}, and a duration longer than
 * {@link #MAX} ({@code Long.MAX_VALUE} nanoseconds, about 292 years) is taken as {@code MAX}: no deadline in practice.
 * Checked before anything is created, so no conversion can overflow half-way through a call.
 */
public final class Timeouts {
    /** The longest timeout rdma4j tells apart: {@code Long.MAX_VALUE} nanoseconds (about 292 years). */
    public static final Duration MAX = Duration.ofNanos(Long.MAX_VALUE);

    private Timeouts() {
    }

    /**
     * The timeout in nanoseconds, at most {@code Long.MAX_VALUE}.
     *
     * @param timeout the caller's timeout
     * @return nanoseconds, 0 to {@code Long.MAX_VALUE}
     * @throws IllegalArgumentException if negative
     */
    public static long nanos(Duration timeout) {
        return clamp(timeout).toNanos();
    }

    /**
     * The timeout in milliseconds, rounded up (a positive timeout is never 0 ms), at most {@code Long.MAX_VALUE}
     * nanoseconds' worth.
     *
     * @param timeout the caller's timeout
     * @return milliseconds
     * @throws IllegalArgumentException if negative
     */
    public static long millis(Duration timeout) {
        long n = nanos(timeout);
        return n / 1_000_000 + (n % 1_000_000 != 0 ? 1 : 0);
    }

    /**
     * The timeout in milliseconds for an API that takes an {@code int} (a socket's {@code SO_TIMEOUT},
     * {@code rdma_resolve_addr}'s {@code timeout_ms}): at least 1, at most {@code Integer.MAX_VALUE} (about 24 days).
     *
     * @param timeout the caller's timeout
     * @return 1 to {@code Integer.MAX_VALUE}
     * @throws IllegalArgumentException if negative
     */
    public static int intMillis(Duration timeout) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, millis(timeout)));
    }

    /**
     * The {@link System#nanoTime()} by which {@code nanos} will have passed, or {@code Long.MAX_VALUE} (never, as
     * for no timeout) when {@code nanos} is half of {@code Long.MAX_VALUE} or more (146 years): so the sum cannot
     * overflow, and {@code System.nanoTime() >= deadline} stays a valid test.
     *
     * @param nanos from {@link #nanos(Duration)}
     * @return the deadline
     */
    public static long deadline(long nanos) {
        return nanos >= Long.MAX_VALUE / 2 ? Long.MAX_VALUE : System.nanoTime() + nanos;
    }

    /**
     * The timeout itself, or {@link #MAX} when it is longer.
     *
     * @param timeout the caller's timeout
     * @return a duration of 0 to {@code MAX}
     * @throws IllegalArgumentException if negative
     */
    public static Duration clamp(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("a timeout must not be negative: " + timeout);
        }
        return timeout.compareTo(MAX) > 0 ? MAX : timeout;
    }
}
