package dev.rdma4j.internal.ffi;

import dev.rdma4j.RdmaUnavailableException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/** Loads libibverbs once, lazily; remembers why it could not be loaded. */
@SuppressWarnings("restricted")
public final class Libibverbs {
    /** System property naming the library to load instead of the default (tests use it to simulate absence). */
    public static final String LIBRARY_PROPERTY = "rdma4j.libibverbs";
    public static final String DEFAULT_LIBRARY = "libibverbs.so.1";

    private Libibverbs() {
    }

    private static final class Holder {
        static final String NAME = System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY);
        static final SymbolLookup LOOKUP;
        static final Throwable CAUSE;

        static {
            SymbolLookup lookup = null;
            Throwable cause = null;
            try {
                lookup = SymbolLookup.libraryLookup(NAME, Arena.global());
            } catch (IllegalArgumentException | IllegalCallerException e) {
                cause = e;
            }
            LOOKUP = lookup;
            CAUSE = cause;
        }
    }

    public static String libraryName() {
        return Holder.NAME;
    }

    /** A fresh exception describing the failure (fresh so every thrower gets its own stack), or null. */
    public static RdmaUnavailableException failure() {
        if (Holder.CAUSE == null) {
            return null;
        }
        return new RdmaUnavailableException("RDMA is unavailable: cannot load " + Holder.NAME
                + " (the rdma-core verbs library; on Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers): "
                + Holder.CAUSE.getMessage(), Holder.CAUSE);
    }

    public static void ensureLoaded() {
        RdmaUnavailableException failure = failure();
        if (failure != null) {
            throw failure;
        }
    }

    /** The loaded library; throws {@link RdmaUnavailableException} if it could not be loaded. */
    public static SymbolLookup lookup() {
        ensureLoaded();
        return Holder.LOOKUP;
    }
}
