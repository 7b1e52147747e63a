package dev.rdma4j.net;

import dev.rdma4j.internal.jfr.Flight;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Watches the receive buffers of one receive queue (a server's shared one, or a connection's own) that are lent to
 * received messages the application has not closed, and reports when every buffer is lent: the queue has none posted,
 * so it has run dry. Each episode is counted and goes through {@link #ranDry} as it starts; the episode ends when a
 * buffer comes back. The report is a {@link System.Logger} WARNING on {@value #LOGGER} that names the queue, says how
 * many buffers are lent and that closing received messages returns them (a DEBUG record only for a connection's own
 * queue, where running dry is the credits' back-pressure): once per episode, but not more often than
 * every {@link #QUIET} per queue (a loaded server may run dry many times a second): the episodes in between are
 * logged at DEBUG and counted in the next WARNING.
 *
 * <p>Threading: thread-safe. {@link #lent()} and {@link #returned()} are an atomic add and a volatile read on every
 * message (nothing allocated, no lock); only the crossing into or out of an episode takes the watch's lock.
 */
final class DryWatch {
    /** The logger of the reports. */
    static final String LOGGER = "dev.rdma4j.net";
    private static final System.Logger LOG = System.getLogger(LOGGER);
    /** The shortest time between two WARNINGs of one queue. */
    static final java.time.Duration QUIET = java.time.Duration.ofSeconds(10);

    private final String queue;
    private final String consequence;
    private final int buffers;
    private final AtomicInteger lent = new AtomicInteger();
    /** Whether every buffer is lent now (written under this). */
    private volatile boolean dry;
    /** Episodes so far (guarded by this). */
    private long episodes;
    /** When the last WARNING was logged, and whether one was (guarded by this). */
    private long warnedAt;
    private boolean warned;
    /** Episodes since the last WARNING, logged at DEBUG only (guarded by this). */
    private long quiet;
    private final java.util.function.LongSupplier clock;
    /** Whether an episode is a WARNING (spaced by {@link #QUIET}), or DEBUG only. */
    private final boolean warn;
    /** The JFR event of the episode under way, if a recording asks for it (guarded by this). */
    private Object recorded;

    /**
     * @param queue       names the receive queue in the report ("the shared receive queue of ...")
     * @param consequence what running dry does to the senders
     * @param buffers     the queue's buffers
     */
    DryWatch(String queue, String consequence, int buffers) {
        this(queue, consequence, buffers, System::nanoTime, true);
    }

    /**
     * A watch whose episodes are logged at DEBUG only ({@code warn} false): for a connection's own receive queue,
     * where running dry is the credit protocol's back-pressure (the peer waits for a credit, no RNR; its
     * {@code ConnectionCounters.creditStalls()} count it), not a fault; counted and recorded (JFR) all the same.
     */
    DryWatch(String queue, String consequence, int buffers, boolean warn) {
        this(queue, consequence, buffers, System::nanoTime, warn);
    }

    /** With a clock of {@link System#nanoTime()}'s kind, for tests of the WARNINGs' spacing. */
    DryWatch(String queue, String consequence, int buffers, java.util.function.LongSupplier clock) {
        this(queue, consequence, buffers, clock, true);
    }

    private DryWatch(String queue, String consequence, int buffers, java.util.function.LongSupplier clock,
            boolean warn) {
        this.warn = warn;
        this.clock = clock;
        this.queue = queue;
        this.consequence = consequence;
        this.buffers = buffers;
    }

    /** A buffer was lent to a message (the dispatching thread). */
    void lent() {
        if (lent.incrementAndGet() >= buffers && !dry) {
            changed();
        }
    }

    /** A message's buffer came back (any thread): posted again, or the queue is going away. */
    void returned() {
        if (lent.decrementAndGet() < buffers && dry) {
            changed();
        }
    }

    /** Buffers lent to messages not closed now. */
    int lentNow() {
        return lent.get();
    }

    /** Whether every buffer is lent now. */
    boolean isDry() {
        return dry;
    }

    /** How many times every buffer was lent. */
    synchronized long episodes() {
        return episodes;
    }

    /**
     * Crossed into or out of an episode: the state follows the count, re-read after each change (a return on another
     * thread between the count and the flag is seen here, or sees the flag and comes here itself).
     */
    private synchronized void changed() {
        for (;;) {
            int n = lent.get();
            boolean now = n >= buffers;
            if (now == dry) {
                return;
            }
            dry = now;
            if (now) {
                episodes++;
                ranDry(n);
            } else {
                if (recorded != null) {
                    Flight.dryEnded(recorded, queue, buffers, n);
                    recorded = null;
                }
                LOG.log(System.Logger.Level.DEBUG, () -> queue + " has a buffer posted again");
            }
        }
    }

    /** An episode starts (lock held): every one comes here, once. */
    private void ranDry(int lentNow) {
        recorded = Flight.on ? Flight.dryStarted() : null; // the JFR event ends with the episode
        if (!warn) { // the credits' back-pressure: DEBUG, the message made only if it is logged (nothing allocated)
            if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
                LOG.log(System.Logger.Level.DEBUG, report(lentNow));
            }
            return;
        }
        long now = clock.getAsLong();
        if (warned && now - warnedAt < QUIET.toNanos()) {
            quiet++;
            LOG.log(System.Logger.Level.DEBUG, () -> queue + " ran dry again: all " + lentNow + " receive buffers"
                    + " are lent");
            return;
        }
        LOG.log(System.Logger.Level.WARNING, report(lentNow)
                + (quiet > 0 ? " (it ran dry " + quiet + " more times since the last report)" : ""));
        warned = true;
        warnedAt = now;
        quiet = 0;
    }

    private String report(int lentNow) {
        return queue + " ran dry: all " + lentNow + " receive buffers are lent to received messages not yet closed,"
                + " so no receive is posted and " + consequence + "; close received messages to return their buffers";
    }
}
