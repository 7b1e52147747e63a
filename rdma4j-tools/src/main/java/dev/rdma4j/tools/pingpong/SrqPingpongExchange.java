package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.BoundedInput;
import static java.nio.charset.StandardCharsets.US_ASCII;

import dev.rdma4j.QpEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;

/**
 * The out-of-band TCP exchange of {@code ibv_srq_pingpong}: {@link PingpongExchange}'s 52-byte
 * {@code "LLLL:QQQQQQ:PPPPPP:GID"} messages, but always {@link #MAX_QP} of them each way whatever
 * {@code -q} is (the records past the used QPs are all zeros). The client writes its 256 records, reads
 * the server's 256 and answers {@code "done"} (5 bytes with the NUL); the server reads the client's 256,
 * connects its QPs, writes its 256 and reads the {@code "done"}.
 */
final class SrqPingpongExchange {
    /** {@code MAX_QP}: how many endpoint records go each way. */
    static final int MAX_QP = 256;
    private static final byte[] DONE = "done\0".getBytes(US_ASCII);
    private static final String NL = System.lineSeparator();

    /** What the server does with the client's endpoints before it answers. */
    @FunctionalInterface
    interface Connector {
        /**
         * Connects the local QPs to the peer's.
         *
         * @param remote the client's {@link #MAX_QP} endpoints
         * @throws PingpongException with the C messages when that fails
         */
        void connect(QpEndpoint[] remote) throws PingpongException;
    }

    private SrqPingpongExchange() {
    }

    /**
     * The client's side.
     *
     * @param host  the server's name or address (every address it resolves to is tried in turn)
     * @param port  the TCP port
     * @param local this side's {@link #MAX_QP} endpoints
     * @return the server's {@link #MAX_QP} endpoints
     * @throws PingpongException with the C tool's messages
     */
    static QpEndpoint[] client(String host, int port, List<QpEndpoint> local) throws PingpongException {
        Socket socket = PingpongExchange.connect(host, port);
        try {
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            try {
                out.write(encode(local));
                out.flush();
            } catch (IOException e) {
                throw new PingpongException("Couldn't send local address", e);
            }
            QpEndpoint[] remote = read(in, "client read");
            try {
                out.write(DONE);
                out.flush();
            } catch (IOException e) {
                // the C client reports it (perror) and goes on with what it read; the traffic will tell
            }
            return remote;
        } catch (IOException e) {
            throw new PingpongException("Couldn't send local address", e);
        } finally {
            PingpongExchange.closeQuietly(socket);
        }
    }

    /**
     * The server's side: accepts one connection on {@code port}, reads the client's endpoints, lets
     * {@code connector} connect the QPs, sends {@code local} and waits for the client's {@code "done"}.
     *
     * @param port      the TCP port (all local addresses)
     * @param local     this side's {@link #MAX_QP} endpoints
     * @param connector connects the QPs to the client's before this side answers
     * @return the client's {@link #MAX_QP} endpoints
     * @throws PingpongException with the C tool's messages
     */
    static QpEndpoint[] server(int port, List<QpEndpoint> local, Connector connector) throws PingpongException {
        return server(port, local, connector, BoundedInput.SERVER_TIMEOUT);
    }

    /** {@link #server(int, List, Connector)} with the time the client has for its records, then for its "done". */
    static QpEndpoint[] server(int port, List<QpEndpoint> local, Connector connector, java.time.Duration timeout)
            throws PingpongException {
        Socket conn = PingpongExchange.acceptOne(port);
        try {
            OutputStream out = conn.getOutputStream();
            InputStream in = new BoundedInput(conn, timeout);
            QpEndpoint[] remote = read(in, "server read");
            try {
                connector.connect(remote);
            } catch (PingpongException e) {
                throw e.then("Couldn't connect to remote QP");
            }
            try {
                out.write(encode(local));
                out.flush();
            } catch (IOException e) {
                throw new PingpongException("Couldn't send local address", e);
            }
            try {
                if (new BoundedInput(conn, timeout).readNBytes(DONE.length).length != DONE.length) {
                    throw new PingpongException("client write: short read");
                }
            } catch (IOException e) {
                throw new PingpongException("client write: " + e.getMessage(), e);
            }
            return remote;
        } catch (IOException e) {
            throw new PingpongException("Couldn't send local address", e);
        } finally {
            PingpongExchange.closeQuietly(conn);
        }
    }

    /** All the records in one buffer, written at once (the C code writes them one by one). */
    private static byte[] encode(List<QpEndpoint> local) {
        if (local.size() != MAX_QP) {
            throw new IllegalArgumentException("expected " + MAX_QP + " endpoints, got " + local.size());
        }
        byte[] all = new byte[MAX_QP * PingpongExchange.MESSAGE_BYTES];
        for (int i = 0; i < MAX_QP; i++) {
            System.arraycopy(PingpongExchange.encode(local.get(i)), 0, all, i * PingpongExchange.MESSAGE_BYTES,
                    PingpongExchange.MESSAGE_BYTES);
        }
        return all;
    }

    private static QpEndpoint[] read(InputStream in, String who) throws PingpongException {
        QpEndpoint[] remote = new QpEndpoint[MAX_QP];
        int size = PingpongExchange.MESSAGE_BYTES;
        for (int i = 0; i < MAX_QP; i++) {
            byte[] msg;
            try {
                msg = in.readNBytes(size);
            } catch (IOException e) {
                throw new PingpongException(who + ": " + e.getMessage() + NL + "0/" + size
                        + ": Couldn't read remote address [" + i + "]", e);
            }
            if (msg.length != size) {
                throw new PingpongException(who + ": short read" + NL + msg.length + "/" + size
                        + ": Couldn't read remote address [" + i + "]");
            }
            remote[i] = PingpongExchange.decode(msg);
        }
        return remote;
    }
}
