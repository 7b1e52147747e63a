package dev.rdma4j.tools.cmatose;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/**
 * What {@code rdma_getaddrinfo} does for ucmatose's addresses on an IP network (it calls glibc's
 * {@code getaddrinfo} with {@code IPPROTO_TCP}), with {@code getaddrinfo}'s error codes and {@code gai_strerror}
 * texts: a host name is resolved by the JDK (which calls {@code getaddrinfo} too and names its error in the
 * exception), a numeric one ({@code -f ip}) is parsed as {@code AI_NUMERICHOST} does, and the port is a service as
 * glibc reads it: a decimal number, else a name looked up for {@code tcp} in {@code /etc/services}. Stateless.
 */
final class AddrInfo {
    /** {@code EAI_NONAME}. */
    static final int EAI_NONAME = -2;
    /** {@code EAI_SERVICE}. */
    static final int EAI_SERVICE = -8;
    /** Where glibc's {@code files} service database is. */
    static final Path SERVICES = Path.of("/etc/services");

    /** glibc's {@code gai_strerror} texts and their codes. */
    private static final Map<String, Integer> CODES = Map.ofEntries(
            Map.entry("Name or service not known", EAI_NONAME),
            Map.entry("Temporary failure in name resolution", -3),
            Map.entry("Non-recoverable failure in name resolution", -4),
            Map.entry("No address associated with hostname", -5),
            Map.entry("ai_family not supported", -6),
            Map.entry("Servname not supported for ai_socktype", EAI_SERVICE),
            Map.entry("Address family for hostname not supported", -9),
            Map.entry("Memory allocation failure", -10),
            Map.entry("System error", -11));

    /** A failed lookup: {@code getaddrinfo}'s code and {@code gai_strerror}'s text (the message). */
    static final class LookupException extends Exception {
        private static final long serialVersionUID = 1L;
        /** The {@code EAI_*} code, negative. */
        private final int code;

        /**
         * A failure.
         *
         * @param code the {@code EAI_*} code
         * @param text {@code gai_strerror(code)}
         */
        LookupException(int code, String text) {
            super(text);
            this.code = code;
        }

        /**
         * The code, which ucmatose returns as its status.
         *
         * @return e.g. {@link #EAI_NONAME}
         */
        int code() {
            return code;
        }
    }

    private AddrInfo() {
    }

    /**
     * The first address {@code getaddrinfo} gives for {@code node}.
     *
     * @param node    a host name or a numeric address
     * @param numeric {@code AI_NUMERICHOST}: only a numeric address (IPv4 in any {@code inet_aton} form, or IPv6)
     * @return the address
     * @throws LookupException if it does not resolve
     */
    static InetAddress host(String node, boolean numeric) throws LookupException {
        if (numeric || node.isEmpty()) {
            try {
                return node.indexOf(':') >= 0 ? Inet6Address.ofLiteral(node) : Inet4Address.ofPosixLiteral(node);
            } catch (IllegalArgumentException e) {
                throw new LookupException(EAI_NONAME, "Name or service not known");
            }
        }
        try {
            return InetAddress.getByName(node);
        } catch (UnknownHostException e) {
            throw failure(node, e);
        }
    }

    /**
     * The {@code getaddrinfo} failure the JDK's exception reports: its message is {@code "host: "} and
     * {@code gai_strerror}'s text when the JDK's own call failed; anything else is {@code EAI_NONAME}.
     *
     * @param node the name looked up
     * @param e    the JDK's exception
     * @return the failure with its code and text
     */
    static LookupException failure(String node, UnknownHostException e) {
        String m = e.getMessage();
        String text = m != null && m.startsWith(node + ": ") ? m.substring(node.length() + 2) : "";
        Integer code = CODES.get(text);
        return code == null ? new LookupException(EAI_NONAME, "Name or service not known")
                : new LookupException(code, text);
    }

    /**
     * The port of a service as glibc's {@code getaddrinfo} reads it for TCP: an empty service is port 0; digits
     * ({@code strtoul}, base 10, all of the text) are the port, cut to 16 bits; any other text, and a number that
     * does not fit an {@code int}, is looked up by name.
     *
     * @param service  the text given to {@code -p}
     * @param services the service database, normally {@link #SERVICES}
     * @return the port
     * @throws LookupException {@code EAI_SERVICE} if the name is not a TCP service there
     */
    static int port(String service, Path services) throws LookupException {
        if (service.isEmpty()) {
            return 0;
        }
        Long number = strtoul(service);
        if (number != null && (int) (long) number >= 0) {
            return (int) (long) number & 0xffff;
        }
        try {
            for (String line : Files.readAllLines(services, StandardCharsets.ISO_8859_1)) {
                int hash = line.indexOf('#');
                String[] f = (hash >= 0 ? line.substring(0, hash) : line).trim().split("\\s+");
                if (f.length < 2 || !f[1].endsWith("/tcp")) {
                    continue;
                }
                for (int i = 0; i < f.length; i++) {
                    if (i != 1 && f[i].equals(service)) {
                        return Integer.parseInt(f[1].substring(0, f[1].length() - 4)) & 0xffff;
                    }
                }
            }
        } catch (NoSuchFileException e) {
            // no database: no name resolves
        } catch (IOException | NumberFormatException e) {
            throw new LookupException(-11, "System error");
        }
        throw new LookupException(EAI_SERVICE, "Servname not supported for ai_socktype");
    }

    /**
     * {@code strtoul(s, &end, 10)} when it reads the whole text (leading white space and a sign allowed, a minus
     * negating in unsigned arithmetic, saturating at {@code ULONG_MAX}), else {@code null}.
     */
    private static Long strtoul(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && (s.charAt(i) == ' ' || (s.charAt(i) >= '\t' && s.charAt(i) <= '\r'))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        int start = i;
        long v = 0;
        boolean overflow = false;
        for (; i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9'; i++) {
            int d = s.charAt(i) - '0';
            if (Long.compareUnsigned(v, Long.divideUnsigned(-1L - d, 10)) > 0) {
                overflow = true;
            } else {
                v = v * 10 + d;
            }
        }
        if (i == start || i != n) {
            return null; // strtoul stopped before the end: getaddrinfo takes the text as a name
        }
        return overflow ? -1L : negative ? -v : v;
    }
}
