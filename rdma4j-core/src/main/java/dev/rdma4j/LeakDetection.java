package dev.rdma4j;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The leak detector: reports rdma4j objects (contexts, protection domains, memory regions, completion channels and
 * queues, address handles; see below for queue pairs) that were garbage-collected without
 * {@code close()}, whose native resources then stay allocated until the process exits. Modelled on Netty's
 * {@code ResourceLeakDetector}: a {@link java.lang.ref.Cleaner} sees the object become unreachable, and at level
 * {@link Level#PARANOID} the report carries the stack trace of where the object was created.
 *
 * <p>Wraps no C verb. A report is a {@link System.Logger.Level#WARNING} on the {@link System.Logger} named
 * {@value #LOGGER}, starting with {@code LEAK:} and naming the object (at {@code PARANOID}: {@code created at
 * Class.method(File.java:line)}, with the creation site as the stack trace of the logged {@link Throwable}), and
 * one more in {@link #leaksReported()}.
 *
 * <p>The level is the system property {@value #PROPERTY} ({@code disabled}, {@code simple} or {@code paranoid},
 * case-insensitive; {@code false} means {@code disabled} and {@code true} {@code paranoid}); without it,
 * {@link Level#DISABLED}: off by default, as the detector costs a {@link java.lang.ref.Cleaner} registration per
 * object created. The older {@code -Ddev.rdma4j.trackCreation=true} means {@code paranoid}. rdma4j's own
 * tests run with {@code paranoid}. An object takes the level in force when it is created; the hot paths (posting,
 * polling) never look at it.
 *
 * <p>An object is reachable from the objects it was created from (a context keeps its protection domains, ...), so
 * a leaked child is reported once its whole tree, up to the leaked root, has become unreachable. Not reported: an
 * open queue pair or shared receive queue stays reachable from rdma4j's JVM-wide table of work-request owners until
 * it is closed (polling finds it there), so it, and everything it uses up to its context, is never collected; nor
 * are objects an open {@code CompletionEngine} drives (its thread holds them).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class LeakDetection {
    /** The system property that sets the initial level: {@value}. */
    public static final String PROPERTY = "dev.rdma4j.leakDetection";
    /** The name of the {@link System.Logger} that reports leaks: {@value}. */
    public static final String LOGGER = "dev.rdma4j";

    /** How much the detector does for each object created. */
    public enum Level {
        /** The default: objects are not watched, leaks are neither reported nor counted. */
        DISABLED,
        /**
         * A leak is logged and counted, naming the object but not where it was created. Costs one
         * {@link java.lang.ref.Cleaner} registration per object, and no stack walk.
         */
        SIMPLE,
        /**
         * Also records where each object was created (a {@link StackWalker} walk per object, without rdma4j's own
         * frames): leak reports and refused closes say it. For tests and debugging.
         */
        PARANOID
    }

    private static final AtomicLong REPORTED = new AtomicLong();
    private static volatile Level level = initialLevel();

    private LeakDetection() {
    }

    private static Level initialLevel() {
        return initialLevel(System.getProperty(PROPERTY), Boolean.getBoolean("dev.rdma4j.trackCreation"));
    }

    /** The level the properties set: {@value #PROPERTY}'s value (or null) and the older trackCreation flag. */
    static Level initialLevel(String value, boolean trackCreation) {
        if (value == null) {
            return trackCreation ? Level.PARANOID : Level.DISABLED;
        }
        Level l = parse(value);
        if (l == null) {
            System.getLogger(LOGGER).log(System.Logger.Level.WARNING, "-D" + PROPERTY + "=" + value
                    + " is not a level (disabled, simple, paranoid, false, true): using disabled");
            return Level.DISABLED;
        }
        return l;
    }

    /** The level a property value names, or null. */
    static Level parse(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "disabled", "false" -> Level.DISABLED;
            case "simple" -> Level.SIMPLE;
            case "paranoid", "true" -> Level.PARANOID;
            default -> null;
        };
    }

    /**
     * The level objects created from now on take.
     *
     * @return the current level
     */
    public static Level level() {
        return level;
    }

    /**
     * Sets the level for objects created from now on (objects already created keep theirs).
     *
     * @param newLevel the level
     */
    public static void setLevel(Level newLevel) {
        level = java.util.Objects.requireNonNull(newLevel, "level");
    }

    /**
     * How many leaked objects this JVM has reported so far (all levels). Tests read it before and after a run.
     *
     * @return the count, never decreasing
     */
    public static long leaksReported() {
        return REPORTED.get();
    }

    /**
     * Reports one leak: the count, then the log record, so that whoever sees the record (a log handler, a test) sees
     * the count include it (counted after, a reader of the record could find the old count: a test did, once in a
     * loaded run).
     */
    static void report(String message, Throwable creationSite) {
        REPORTED.incrementAndGet();
        System.Logger logger = System.getLogger(LOGGER);
        if (creationSite != null) {
            logger.log(System.Logger.Level.WARNING, message, creationSite);
        } else {
            logger.log(System.Logger.Level.WARNING, message);
        }
    }
}
