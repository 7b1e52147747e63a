package dev.rdma4j.internal.ffi;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Linux errnos whose names rdma4j's messages give (the statuses of rdma_cm events, a verb's failure), valued as
 * in {@code <errno.h>}, and {@link #name(int)}. {@link CConstants#all()} lists every constant here and every entry
 * of the name table, so {@code LayoutConformanceTest} compares each with gcc's value.
 *
 * <p>Threading: constants and an immutable table.
 */
public final class Errno {
    private Errno() {
    }

    /** The errnos of {@code <errno.h>} that {@link #name(int)} names. */
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENODATA = 61;
    public static final int EPROTO = 71;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETDOWN = 100;
    public static final int ENETUNREACH = 101;
    public static final int ECONNABORTED = 103;
    public static final int ECONNRESET = 104;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTDOWN = 112;
    public static final int EHOSTUNREACH = 113;
    public static final int ECANCELED = 125;

    /** Each named errno: {C name, value}; {@link CConstants#all()} has gcc check every pair. */
    static final List<Object[]> NAMED = List.of(
            c("EPERM", EPERM), c("ENOENT", ENOENT), c("EINTR", EINTR), c("EIO", EIO), c("EAGAIN", EAGAIN),
            c("ENOMEM", ENOMEM), c("EACCES", EACCES), c("EBUSY", EBUSY), c("ENODEV", ENODEV), c("EINVAL", EINVAL),
            c("ENODATA", ENODATA), c("EPROTO", EPROTO), c("EOPNOTSUPP", EOPNOTSUPP), c("EADDRINUSE", EADDRINUSE),
            c("EADDRNOTAVAIL", EADDRNOTAVAIL), c("ENETDOWN", ENETDOWN), c("ENETUNREACH", ENETUNREACH),
            c("ECONNABORTED", ECONNABORTED), c("ECONNRESET", ECONNRESET), c("ETIMEDOUT", ETIMEDOUT),
            c("ECONNREFUSED", ECONNREFUSED), c("EHOSTDOWN", EHOSTDOWN), c("EHOSTUNREACH", EHOSTUNREACH),
            c("ECANCELED", ECANCELED));

    private static final Map<Integer, String> NAMES = new HashMap<>();

    static {
        for (Object[] e : NAMED) {
            NAMES.put(((Number) e[1]).intValue(), (String) e[0]);
        }
    }

    /**
     * The C name of an errno.
     *
     * @param errno a positive errno
     * @return e.g. {@code "ETIMEDOUT"} for 110, or {@code null} for one not in the table
     */
    public static String name(int errno) {
        return NAMES.get(errno);
    }

    private static Object[] c(String name, int value) {
        return new Object[] {name, (long) value};
    }
}
