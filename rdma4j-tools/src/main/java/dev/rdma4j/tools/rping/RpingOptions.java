package dev.rdma4j.tools.rping;

import java.net.InetAddress;

/**
 * rping's validated settings.
 *
 * @param server     {@code -s} (else {@code -c})
 * @param persistent {@code -P}: serve connections one after the other and in parallel, forever
 * @param address    {@code -a}: the server's address (default {@code 0.0.0.0}, as the C tool's zeroed
 *                   {@code sockaddr_in})
 * @param source     {@code -I}: the client's source address, or {@code null} to let the route pick it
 * @param port       {@code -p} (default 7174)
 * @param count      {@code -C}: pings the client does, 0 for no end (default); the server ignores it
 * @param size       {@code -S}: the ping data size (default 64)
 * @param verbose    {@code -v}: print the ping data
 * @param validate   {@code -V}: the client compares what came back with what it sent
 * @param debug      {@code -d}: debug lines on stdout
 */
record RpingOptions(boolean server, boolean persistent, InetAddress address, InetAddress source, int port, int count, int size,
        boolean verbose, boolean validate, boolean debug) {
    /** The default port. */
    static final int DEFAULT_PORT = 7174;
    /** The default {@code -S}. */
    static final int DEFAULT_SIZE = 64;
    /**
     * The smallest {@code -S}: rdma-core's {@code RPING_MIN_BUFSIZE}, {@code sizeof(stringify(INT_MAX)) +
     * sizeof(RPING_MSG_FMT)}, which is 23 because {@code INT_MAX} is not defined where rping.c expands it.
     */
    static final int MIN_SIZE = 23;
    /** The largest {@code -S}: {@code RPING_BUFSIZE - 1}. */
    static final int MAX_SIZE = 64 * 1024 - 1;
}
