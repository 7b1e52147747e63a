package dev.rdma4j;

import java.io.IOException;

/**
 * A verb failed: carries the C verb's name, the {@code errno} it reported and the
 * {@code strerror} text, e.g. {@code ibv_open_device failed: errno 19 (No such device)}.
 *
 * <p>Threading: immutable, thread-safe.
 */
public final class VerbsException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The C verb that failed, e.g. {@code "ibv_modify_qp"}. */
    private final String verb;
    /** The error number the verb reported. */
    private final int errno;
    /** {@code strerror(errno)}. */
    private final String errnoText;

    /**
     * Creates the exception for a failed verb.
     *
     * @param verb      the C function that failed
     * @param errno     the error number it reported (positive)
     * @param errnoText {@code strerror(errno)}
     * @param detail    optional context (the object or argument involved), may be {@code null}
     */
    public VerbsException(String verb, int errno, String errnoText, String detail) {
        super(verb + " failed: errno " + errno + " (" + errnoText + ")" + (detail == null ? "" : ": " + detail));
        this.verb = verb;
        this.errno = errno;
        this.errnoText = errnoText;
    }

    /**
     * The exception for a verb that reported {@code errno}, with the C library's text for it ({@code strerror}): e.g.
     * for the status a {@code tryPost} returned ({@code ENOMEM} when the queue is full).
     *
     * @param verb   the C function that failed, e.g. {@code "ibv_post_send"}
     * @param errno  the error number it reported (positive)
     * @param detail optional context (the object involved), may be {@code null}
     * @return the exception
     */
    public static VerbsException of(String verb, int errno, String detail) {
        return new VerbsException(verb, errno, dev.rdma4j.internal.ffi.Native.strerror(errno), detail);
    }

    /** The API's exception for a failure the bindings reported. */
    static VerbsException from(dev.rdma4j.internal.ffi.NativeException e) {
        return new VerbsException(e.verb(), e.errno(), e.errnoText(), e.detail());
    }

    /**
     * The C verb that failed.
     *
     * @return e.g. {@code "ibv_open_device"}
     */
    public String verb() {
        return verb;
    }

    /**
     * The {@code errno} value the verb reported.
     *
     * @return a positive error number such as 22 ({@code EINVAL})
     */
    public int errno() {
        return errno;
    }

    /**
     * The C library's text for {@link #errno()} ({@code strerror}).
     *
     * @return e.g. {@code "Invalid argument"}
     */
    public String errnoText() {
        return errnoText;
    }
}
