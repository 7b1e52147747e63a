package dev.rdma4j.internal.ffi;

/**
 * A C library (libibverbs, librdmacm) could not be loaded. The API checks availability at its entry points and
 * throws its public {@code dev.rdma4j.RdmaUnavailableException} built from {@link Libibverbs#failureMessage()} or
 * {@link RdmaCm#failureMessage()}; this one is what the bindings throw if a call gets past that check.
 *
 * <p>Threading: immutable.
 */
public final class LibraryUnavailableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    LibraryUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
