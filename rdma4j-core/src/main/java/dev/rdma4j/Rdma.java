package dev.rdma4j;

import dev.rdma4j.internal.ffi.Libibverbs;

/**
 * Availability probe for rdma4j (in the manner of Netty's {@code Epoll.isAvailable()}): whether the
 * native verbs library can be used on this machine, and why not. Loading happens once, lazily.
 *
 * <p>Threading: thread-safe (static methods; library loading happens once).
 */
public final class Rdma {
    private Rdma() {
    }

    /**
     * Whether libibverbs was found and loaded ({@code dlopen("libibverbs.so.1")}). A machine may have the
     * library and still no RDMA device: see {@link Device#list()}.
     *
     * @return {@code true} if the verbs can be called
     */
    public static boolean isAvailable() {
        return Libibverbs.failureMessage() == null;
    }

    /**
     * Why rdma4j is unavailable.
     *
     * @return the exception every entry point would throw, or {@code null} when {@link #isAvailable()}
     */
    public static RdmaUnavailableException unavailabilityCause() {
        String message = Libibverbs.failureMessage();
        return message == null ? null : new RdmaUnavailableException(message, Libibverbs.failureCause());
    }

    /**
     * Throws unless {@link #isAvailable()}.
     *
     * @throws RdmaUnavailableException naming the missing library
     */
    public static void ensureAvailable() {
        RdmaUnavailableException cause = unavailabilityCause();
        if (cause != null) {
            throw cause;
        }
    }

    /**
     * The name or path of the verbs library rdma4j loads: {@code libibverbs.so.1} unless the system
     * property {@code rdma4j.libibverbs} names another.
     *
     * @return the library name passed to the dynamic loader
     */
    public static String libraryName() {
        return Libibverbs.libraryName();
    }
}
