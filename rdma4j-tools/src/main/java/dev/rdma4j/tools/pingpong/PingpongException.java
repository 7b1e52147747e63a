package dev.rdma4j.tools.pingpong;

import java.io.Serial;

/**
 * A pingpong run failed; the message is what the C tool prints on stderr (one or more lines), and the
 * tool exits with status 1 as the C one does.
 */
final class PingpongException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    PingpongException(String message) {
        super(message);
    }

    PingpongException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * This failure followed by one more line, as when the C code reports a failure and its caller adds its own.
     *
     * @param line the caller's line
     * @return the longer failure, with the same cause
     */
    PingpongException then(String line) {
        return new PingpongException(getMessage() + System.lineSeparator() + line, getCause());
    }
}
