package dev.rdma4j.tools.perf;

/** A failed {@code rdma4j perf} run: one line for stderr, exit status 1. */
public final class PerfException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A failure.
     *
     * @param message what failed
     */
    public PerfException(String message) {
        super(message);
    }

    /**
     * A failure with its cause.
     *
     * @param message what failed
     * @param cause   why
     */
    public PerfException(String message, Throwable cause) {
        super(message + (cause.getMessage() != null ? ": " + cause.getMessage() : ""), cause);
    }
}
