package dev.rdma4j.internal.ffi;

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

    /** Why the library could not be loaded (the text the API's exception carries), or null when it is loaded. */
    public static String failureMessage() {
        if (Holder.CAUSE == null) {
            return null;
        }
        return "RDMA is unavailable: cannot load " + Holder.NAME
                + " (the rdma-core verbs library; on Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers): "
                + Holder.CAUSE.getMessage();
    }

    /** The loader's exception, or null when the library is loaded. */
    public static Throwable failureCause() {
        return Holder.CAUSE;
    }

    /** Throws {@link LibraryUnavailableException} when the library could not be loaded. */
    public static void ensureLoaded() {
        if (Holder.CAUSE != null) {
            throw new LibraryUnavailableException(failureMessage(), Holder.CAUSE);
        }
    }

    /** The loaded library; throws {@link LibraryUnavailableException} if it could not be loaded. */
    public static SymbolLookup lookup() {
        ensureLoaded();
        return Holder.LOOKUP;
    }
}
