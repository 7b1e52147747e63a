package dev.rdma4j.internal.ffi;

/**
 * A C call failed: the function's name, the {@code errno} it reported, {@code strerror}'s text and an optional
 * detail. The bindings throw it and know no API type; the API turns it into its public
 * {@code dev.rdma4j.VerbsException} (same four facts), so this room depends on no other rdma4j package.
 *
 * <p>An {@link java.io.IOException}, as the API's exception is, so a hook that may throw either (a queue pair's
 * create and destroy on an rdma_cm id) declares one type.
 *
 * <p>Threading: immutable.
 */
public final class NativeException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;
    private final String errnoText;
    private final String detail;

    NativeException(String verb, int errno, String errnoText, String detail) {
        super(verb + " failed: errno " + errno + " (" + errnoText + ")" + (detail == null ? "" : ": " + detail));
        this.verb = verb;
        this.errno = errno;
        this.errnoText = errnoText;
        this.detail = detail;
    }

    /** The C function that failed, e.g. {@code "ibv_create_qp"}. */
    public String verb() {
        return verb;
    }

    /** The positive error number it reported. */
    public int errno() {
        return errno;
    }

    /** {@code strerror(errno)}. */
    public String errnoText() {
        return errnoText;
    }

    /** The object or argument involved, or null. */
    public String detail() {
        return detail;
    }
}
