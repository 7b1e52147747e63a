package dev.rdma4j.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The records a {@code java.util.logging} logger (the one behind a {@link System.Logger} of that name) publishes
 * while the capture is open: what the library reported, for tests to assert on. {@link #close()} puts the logger back
 * as it was.
 *
 * <p>Threading: records may be published from any thread; {@link #records()} is a thread-safe list.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger logger; // held: java.util.logging keeps loggers weakly
    private final Level level;
    private final boolean parents;

    private LogCapture(Logger logger) {
        this.logger = logger;
        this.level = logger.getLevel();
        this.parents = logger.getUseParentHandlers();
        logger.addHandler(this);
    }

    /**
     * Captures what {@code name} logs at its level.
     *
     * @param name the logger's name
     * @return the open capture
     */
    public static LogCapture of(String name) {
        return new LogCapture(Logger.getLogger(name));
    }

    /**
     * Lowers the logger's level (e.g. to {@link Level#ALL} for DEBUG records too).
     *
     * @param l the level
     * @return this
     */
    public LogCapture level(Level l) {
        logger.setLevel(l);
        return this;
    }

    /**
     * Keeps the records from the parent handlers (the console): for tests that make many.
     *
     * @return this
     */
    public LogCapture quiet() {
        logger.setUseParentHandlers(false);
        return this;
    }

    /**
     * What was published so far.
     *
     * @return the records, live
     */
    public List<LogRecord> records() {
        return records;
    }

    @Override
    public void publish(LogRecord r) {
        records.add(r);
    }

    @Override
    public void flush() {
        // nothing buffered
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(level);
        logger.setUseParentHandlers(parents);
    }
}
