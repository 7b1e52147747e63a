package dev.rdma4j.connect;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.RemoteRegion;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Blocking out-of-band set-up over TCP, before any RDMA traffic: each side sends its {@link Offer} (its
 * queue pair's {@link QpEndpoint} and the {@link RemoteRegion}s it lets the peer access) and receives
 * the peer's. The exchange is symmetric: both sides write, then read.
 *
 * <p>Wire format (big-endian): the 8 bytes {@code "rdma4j\0\1"}, {@code u16 lid}, {@code u32 qpn},
 * {@code u32 psn}, 16 GID bytes, {@code u16} region count, then per region {@code u64 address},
 * {@code u64 length}, {@code u32 rkey}. (The pingpong tools speak rdma-core's own text format instead.)
 */
public final class EndpointExchange {
    private static final byte[] MAGIC = {'r', 'd', 'm', 'a', '4', 'j', 0, 1};
    private static final int MAX_REGIONS = 4096;

    private EndpointExchange() {
    }

    /**
     * What one side tells the other.
     *
     * @param endpoint the side's queue pair endpoint
     * @param regions  regions the peer may access (possibly none)
     */
    public record Offer(QpEndpoint endpoint, List<RemoteRegion> regions) {
        /**
         * Validates and copies.
         *
         * @param endpoint the endpoint
         * @param regions  the regions
         */
        public Offer {
            java.util.Objects.requireNonNull(endpoint, "endpoint");
            regions = List.copyOf(regions);
            if (regions.size() > MAX_REGIONS) {
                throw new IllegalArgumentException("at most " + MAX_REGIONS + " regions per offer");
            }
        }

        /**
         * An offer of an endpoint and some regions.
         *
         * @param endpoint the endpoint
         * @param regions  the regions
         * @return the offer
         */
        public static Offer of(QpEndpoint endpoint, RemoteRegion... regions) {
            return new Offer(endpoint, List.of(regions));
        }
    }

    /**
     * Exchanges offers over a connected socket.
     *
     * @param socket the connection
     * @param mine   this side's offer
     * @return the peer's offer
     * @throws IOException if the connection fails or the peer does not speak this format
     */
    public static Offer exchange(Socket socket, Offer mine) throws IOException {
        write(socket.getOutputStream(), mine);
        return read(socket.getInputStream());
    }

    /**
     * Server side: accepts one connection on {@code server} and exchanges offers.
     *
     * @param server  a bound server socket
     * @param mine    this side's offer
     * @param timeout how long to wait for the peer, at connect and at every read
     * @return the peer's offer
     * @throws IOException on failure, {@link SocketTimeoutException} when the peer does not come
     */
    public static Offer accept(ServerSocket server, Offer mine, Duration timeout) throws IOException {
        server.setSoTimeout(millis(timeout));
        try (Socket s = server.accept()) {
            s.setSoTimeout(millis(timeout));
            s.setTcpNoDelay(true);
            return exchange(s, mine);
        }
    }

    /**
     * Client side: connects to {@code peer} and exchanges offers, retrying the connection until the
     * server listens or {@code timeout} passes.
     *
     * @param peer    the server's address
     * @param mine    this side's offer
     * @param timeout the deadline for connecting, and for every read
     * @return the peer's offer
     * @throws IOException on failure or timeout
     */
    public static Offer connect(InetSocketAddress peer, Offer mine, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (long backoffMs = 5;; backoffMs = Math.min(200, backoffMs * 2)) {
            Socket s = new Socket();
            try {
                s.connect(peer, millis(timeout));
                s.setSoTimeout(millis(timeout));
                s.setTcpNoDelay(true);
                try (s) {
                    return exchange(s, mine);
                }
            } catch (java.net.ConnectException e) {
                s.close();
                if (System.nanoTime() + backoffMs * 1_000_000 > deadline) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(backoffMs * 1_000_000);
            }
        }
    }

    static void write(OutputStream out, Offer offer) throws IOException {
        DataOutputStream d = new DataOutputStream(new java.io.BufferedOutputStream(out));
        d.write(MAGIC);
        QpEndpoint e = offer.endpoint();
        d.writeShort(e.lid());
        d.writeInt(e.qpn());
        d.writeInt(e.psn());
        d.write(e.gid().toBytes());
        d.writeShort(offer.regions().size());
        for (RemoteRegion r : offer.regions()) {
            d.writeLong(r.address());
            d.writeLong(r.length());
            d.writeInt(r.rkey());
        }
        d.flush();
    }

    static Offer read(InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        byte[] magic = new byte[MAGIC.length];
        d.readFully(magic);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            throw new IOException("the peer does not speak the rdma4j endpoint exchange (bad magic)");
        }
        int lid = d.readUnsignedShort();
        int qpn = d.readInt();
        int psn = d.readInt();
        byte[] gid = new byte[16];
        d.readFully(gid);
        int n = d.readUnsignedShort();
        if (n > MAX_REGIONS) {
            throw new IOException("the peer offers " + n + " regions, more than " + MAX_REGIONS);
        }
        List<RemoteRegion> regions = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long address = d.readLong();
            long length = d.readLong();
            int rkey = d.readInt();
            if (length < 0) {
                throw new IOException("the peer offers a region of negative length");
            }
            regions.add(new RemoteRegion(address, length, rkey));
        }
        try {
            return new Offer(new QpEndpoint(lid, qpn, psn, Gid.of(gid)), regions);
        } catch (IllegalArgumentException e) {
            throw new IOException("the peer sent an invalid endpoint: " + e.getMessage(), e);
        }
    }

    private static int millis(Duration d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.toMillis()));
    }
}
