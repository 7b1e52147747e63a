package dev.rdma4j.tools.cmatose;

/**
 * ucmatose's settings after option parsing, as {@code cmatose.c}'s globals hold them.
 *
 * @param server       {@code -s}: the server's address, which makes this run the client; {@code null} for the server
 * @param bind         {@code -b}: the address to bind to (the server's listening address, the client's source), or
 *                     {@code null}
 * @param numericHost  {@code -f ip} (or {@code ipv6}): addresses are numeric only ({@code RAI_NUMERICHOST})
 * @param connections  {@code -c} (default 1)
 * @param messageCount {@code -C}: messages each side sends on each connection (default 10)
 * @param messageSize  {@code -S}: their size in bytes (default 100; 0 sends none)
 * @param port         {@code -p}: the port, a service as {@code getaddrinfo} takes it (default {@code "7471"})
 */
record CmatoseOptions(String server, String bind, boolean numericHost, int connections, int messageCount,
        int messageSize, String port) {
    /** {@code cmatose.c}'s default port. */
    static final String DEFAULT_PORT = "7471";
    /** The default {@code -c}. */
    static final int DEFAULT_CONNECTIONS = 1;
    /** The default {@code -C}. */
    static final int DEFAULT_MESSAGE_COUNT = 10;
    /** The default {@code -S}. */
    static final int DEFAULT_MESSAGE_SIZE = 100;

    /**
     * Whether this run is the client ({@code -s} given).
     *
     * @return true for the client
     */
    boolean client() {
        return server != null;
    }
}
