package dev.rdma4j;

/**
 * rdma4j cannot run on this machine: libibverbs ({@code libibverbs.so.1}, from rdma-core) could not be
 * loaded. The message names the library that is missing and how to install it; the cause is the
 * loader's own error. Thrown by every entry point instead of an {@link UnsatisfiedLinkError}.
 *
 * @see Rdma#ensureAvailable()
 *
 * <p>Threading: immutable, thread-safe.
 */
public final class RdmaUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to get it
     * @param cause   the loader's error
     */
    public RdmaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
