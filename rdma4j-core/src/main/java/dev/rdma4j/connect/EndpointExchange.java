package dev.rdma4j.connect;

import dev.rdma4j.internal.Timeouts;
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
 * <p><b>The barrier.</b> Exchanging endpoints is not enough to start sending: a send that reaches a peer
 * whose queue pair is not yet in RTR is dropped, and the sender retries or fails. {@link #acceptSession} and
 * {@link #connectSession} keep the socket open in a {@link Session}: move the queue pair to RTS
 * ({@code qp.connect(session.peer().endpoint(), psn)}), post the first receives, then call
 * {@link Session#sync()}, which returns once the peer has called it too; from then on both queue pairs are
 * in RTS with their receives posted. {@link #sync(Socket)} does the same on a socket of one's own.
 *
 * <p>Wire format (big-endian): the 8 bytes {@code "rdma4j\0\1"}, {@code u16 lid}, {@code u32 qpn},
 * {@code u32 psn}, 16 GID bytes, {@code u16} region count, then per region {@code u64 address},
 * {@code u64 length}, {@code u32 rkey}; a sync is the one byte {@code 'R'} each way. (The pingpong tools
 * speak rdma-core's own text format instead.)
 *
 * <p><b>Hostile or broken peers.</b> Whatever a peer sends, a read ends with the peer's offer or an
 * {@link IOException} naming what is wrong (bad magic, more than 4096 regions, a negative length, an invalid
 * endpoint, the connection closed after N of M bytes), and, with a timeout, within it: the timeout bounds the
 * whole offer, so a peer that sends nothing, or a byte now and then, ends in a {@link SocketTimeoutException}
 * at the deadline. {@link #accept}/{@link #acceptSession} close the failed connection and leave the server
 * socket as it was, so a loop of accepts goes on to serve the next client.
 *
 * <p><b>Timeouts.</b> A socket timeout is an {@code int} of milliseconds: a {@link Duration} is taken as 1 ms to
 * {@code Integer.MAX_VALUE} ms (about 24 days) per wait, a negative one is an {@link IllegalArgumentException}.
 *
 * <p>Threading: the static methods are thread-safe (they share nothing); a {@link Session} is used by one
 * thread at a time.
 */
public final class EndpointExchange {
    private static final byte[] MAGIC = {'r', 'd', 'm', 'a', '4', 'j', 0, 1};
    private static final int MAX_REGIONS = 4096;
    /** An offer without regions: magic, LID, QPN, PSN, GID, region count. */
    private static final int MIN_OFFER_BYTES = 8 + 2 + 4 + 4 + 16 + 2;
    private static final int REGION_BYTES = 8 + 8 + 4;
    /** The byte each side writes at a {@link #sync(Socket)}. */
    private static final int READY = 'R';

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
     * @throws IOException if the connection fails or the peer does not speak this format: the message names
     *                     what is wrong (bad magic, too many regions, a negative length, an invalid endpoint, the
     *                     connection closed after N of M bytes); {@link SocketTimeoutException} when the socket
     *                     has a timeout ({@link Socket#setSoTimeout}) and the peer's whole offer did not arrive
     *                     within it (the timeout bounds the offer, not each read)
     */
    public static Offer exchange(Socket socket, Offer mine) throws IOException {
        write(socket.getOutputStream(), mine);
        int timeout = socket.getSoTimeout();
        if (timeout <= 0) {
            return read(socket.getInputStream());
        }
        // the whole offer within the timeout, not each read: a peer sending a byte now and then (slow-loris)
        // must not hold the listener for longer
        DeadlineInput in = new DeadlineInput(socket, Duration.ofMillis(timeout));
        try {
            return read(in);
        } finally {
            socket.setSoTimeout(timeout);
        }
    }

    /**
     * The socket's input with one deadline for all reads: each read waits at most until it, then fails with a
     * {@link SocketTimeoutException} that says how much of the offer came.
     */
    private static final class DeadlineInput extends InputStream {
        private final Socket socket;
        private final InputStream in;
        private final Duration timeout;
        private final long deadline;
        private long count;

        DeadlineInput(Socket socket, Duration timeout) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.timeout = timeout;
            this.deadline = System.nanoTime() + timeout.toNanos();
        }

        private void arm() throws IOException {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw timedOut();
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)));
        }

        private SocketTimeoutException timedOut() {
            return new SocketTimeoutException("the peer sent " + count + " bytes of its endpoint exchange offer"
                    + " (at least " + MIN_OFFER_BYTES + ") but not all of it within " + timeout);
        }

        @Override
        public int read() throws IOException {
            arm();
            try {
                int b = in.read();
                if (b >= 0) {
                    count++;
                }
                return b;
            } catch (SocketTimeoutException e) {
                throw (SocketTimeoutException) timedOut().initCause(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            arm();
            try {
                int n = in.read(b, off, len);
                if (n > 0) {
                    count += n;
                }
                return n;
            } catch (SocketTimeoutException e) {
                throw (SocketTimeoutException) timedOut().initCause(e);
            }
        }
    }

    /**
     * Server side: accepts one connection on {@code server} and exchanges offers.
     *
     * @param server  a bound server socket
     * @param mine    this side's offer
     * @param timeout how long to wait for the peer to connect, then for its whole offer (a peer sending it
     *                slowly, byte by byte, is cut off at this deadline)
     * @return the peer's offer
     * @throws IOException on failure, {@link SocketTimeoutException} when the peer does not come
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Offer accept(ServerSocket server, Offer mine, Duration timeout) throws IOException {
        try (Session s = acceptSession(server, mine, timeout)) {
            return s.peer();
        }
    }

    /**
     * Server side, keeping the connection for {@link Session#sync()}: accepts one connection on
     * {@code server} and exchanges offers.
     *
     * @param server  a bound server socket
     * @param mine    this side's offer
     * @param timeout how long to wait for the peer to connect, then for its whole offer, then at every
     *                {@link Session#sync()}
     * @return the session: the peer's offer, the barrier; close it when done
     * @throws IOException on failure, {@link SocketTimeoutException} when the peer does not come
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Session acceptSession(ServerSocket server, Offer mine, Duration timeout) throws IOException {
        int ms = millis(timeout);
        server.setSoTimeout(ms);
        Socket s = server.accept();
        try {
            s.setSoTimeout(ms);
            s.setTcpNoDelay(true);
            return new Session(s, exchange(s, mine));
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
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
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Offer connect(InetSocketAddress peer, Offer mine, Duration timeout) throws IOException {
        try (Session s = connectSession(peer, mine, timeout)) {
            return s.peer();
        }
    }

    /**
     * Client side, keeping the connection for {@link Session#sync()}: connects to {@code peer} (retrying
     * until the server listens or {@code timeout} passes) and exchanges offers.
     *
     * @param peer    the server's address
     * @param mine    this side's offer
     * @param timeout the deadline for connecting, and for every read (syncs included)
     * @return the session: the peer's offer, the barrier; close it when done
     * @throws IOException on failure or timeout
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Session connectSession(InetSocketAddress peer, Offer mine, Duration timeout) throws IOException {
        int ms = millis(timeout);
        long deadline = Timeouts.deadline(Timeouts.nanos(timeout));
        for (long backoffMs = 5;; backoffMs = Math.min(200, backoffMs * 2)) {
            Socket s = new Socket();
            try {
                s.connect(peer, ms);
                s.setSoTimeout(ms);
                s.setTcpNoDelay(true);
                return new Session(s, exchange(s, mine));
            } catch (java.net.ConnectException e) {
                s.close();
                if (deadline - System.nanoTime() < backoffMs * 1_000_000) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(backoffMs * 1_000_000);
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        }
    }

    /**
     * A barrier over a connected socket: writes one byte and waits for the peer's. Returns once the peer
     * has called it too (its {@link Socket#getSoTimeout()} bounds the wait). Call it after the queue pair is
     * in RTS and its first receives are posted, before the first send.
     *
     * @param socket the connection the offers went over
     * @throws IOException if the peer closed the connection before its sync, sent something else, or (as
     *                     {@link SocketTimeoutException}) did not sync in time
     */
    public static void sync(Socket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(READY);
        out.flush();
        int b = socket.getInputStream().read();
        if (b < 0) {
            throw new java.io.EOFException("the peer closed the endpoint exchange before its sync()");
        }
        if (b != READY) {
            throw new IOException("the peer sent 0x" + Integer.toHexString(b) + " where a sync was expected"
                    + " (does it call sync() at the same point?)");
        }
    }

    /**
     * An endpoint exchange whose connection stays open: the peer's {@link Offer} and a {@link #sync()}
     * barrier. Not thread-safe: one thread at a time.
     */
    public static final class Session implements AutoCloseable {
        private final Socket socket;
        private final Offer peer;

        private Session(Socket socket, Offer peer) {
            this.socket = socket;
            this.peer = peer;
        }

        /**
         * What the peer offered.
         *
         * @return its endpoint and regions
         */
        public Offer peer() {
            return peer;
        }

        /**
         * The barrier: see {@link EndpointExchange#sync(Socket)}. May be called any number of times, e.g.
         * once both queue pairs are in RTS and again before closing.
         *
         * @throws IOException if the peer left before syncing, or did not sync within the session's timeout
         *                     ({@link SocketTimeoutException})
         */
        public void sync() throws IOException {
            EndpointExchange.sync(socket);
        }

        /**
         * Closes the connection.
         *
         * @throws IOException if closing the socket fails
         */
        @Override
        public void close() throws IOException {
            socket.close();
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
        // the counts of the EOF message: what came, and what the offer needed
        long[] got = {0};
        int[] need = {MIN_OFFER_BYTES};
        DataInputStream d = new DataInputStream(new InputStream() {
            @Override
            public int read() throws IOException {
                int b = in.read();
                if (b >= 0) {
                    got[0]++;
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                if (n > 0) {
                    got[0] += n;
                }
                return n;
            }
        });
        try {
            byte[] magic = new byte[MAGIC.length];
            d.readFully(magic);
            if (!java.util.Arrays.equals(magic, MAGIC)) {
                throw new IOException("the peer does not speak the rdma4j endpoint exchange (bad magic: 0x"
                        + java.util.HexFormat.of().formatHex(magic) + ")");
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
            need[0] = MIN_OFFER_BYTES + n * REGION_BYTES;
            List<RemoteRegion> regions = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long address = d.readLong();
                long length = d.readLong();
                int rkey = d.readInt();
                if (length < 0) {
                    throw new IOException("the peer offers a region of negative length (region " + i + ": "
                            + length + ")");
                }
                regions.add(new RemoteRegion(address, length, rkey));
            }
            try {
                return new Offer(new QpEndpoint(lid, qpn, psn, Gid.of(gid)), regions);
            } catch (IllegalArgumentException e) {
                throw new IOException("the peer sent an invalid endpoint: " + e.getMessage(), e);
            }
        } catch (java.io.EOFException e) {
            java.io.EOFException x = new java.io.EOFException("the peer closed the connection after " + got[0]
                    + " bytes of its endpoint exchange offer (" + need[0] + " expected)");
            x.initCause(e);
            throw x;
        }
    }

    /** A socket timeout: 1 ms to {@code Integer.MAX_VALUE} ms; a negative {@code d} is refused. */
    private static int millis(Duration d) {
        return Timeouts.intMillis(d);
    }
}
