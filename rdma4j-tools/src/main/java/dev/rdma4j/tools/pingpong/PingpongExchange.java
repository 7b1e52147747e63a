package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.BoundedInput;
import static java.nio.charset.StandardCharsets.US_ASCII;

import dev.rdma4j.Gid;
import dev.rdma4j.QpEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * The out-of-band TCP exchange of the C pingpong examples ({@code pp_client_exch_dest},
 * {@code pp_server_exch_dest}), byte for byte: each side sends {@code "LLLL:QQQQQQ:PPPPPP:GID"} (LID,
 * QPN and PSN in hex, the GID as 32 hex digits of its 16 bytes in order) in a 52-byte message that
 * includes the terminating NUL. The client connects and writes first, reads the server's message and
 * answers {@code "done"} (5 bytes with its NUL); the server reads, connects its QP to the client before
 * it answers (so the client's first send finds it ready), then reads the {@code "done"}.
 */
final class PingpongExchange {
    /** {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}: 51 characters and the NUL. */
    static final int MESSAGE_BYTES = 52;
    private static final byte[] DONE = "done\0".getBytes(US_ASCII);
    private static final String NL = System.lineSeparator();

    /** What the server does with the client's endpoint before it answers. */
    @FunctionalInterface
    interface Connector {
        /**
         * Connects the local QP to the peer.
         *
         * @param remote the client's endpoint
         * @throws PingpongException with the C messages when that fails
         */
        void connect(QpEndpoint remote) throws PingpongException;
    }

    private PingpongExchange() {
    }

    /**
     * The wire message for an endpoint.
     *
     * @param e the endpoint
     * @return {@link #MESSAGE_BYTES} bytes, NUL-terminated
     */
    static byte[] encode(QpEndpoint e) {
        String text = String.format(Locale.ROOT, "%04x:%06x:%06x:%s", e.lid(), e.qpn(), e.psn(), e.gid().toHex());
        byte[] msg = new byte[MESSAGE_BYTES];
        byte[] b = text.getBytes(US_ASCII);
        System.arraycopy(b, 0, msg, 0, Math.min(b.length, MESSAGE_BYTES - 1));
        return msg;
    }

    /**
     * Reads a peer's wire message (what the C code's {@code sscanf(msg, "%x:%x:%x:%s")} takes).
     *
     * @param msg the message, NUL-terminated or not
     * @return the endpoint
     * @throws PingpongException if it is not in the format
     */
    static QpEndpoint decode(byte[] msg) throws PingpongException {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        String text = new String(msg, 0, end, US_ASCII);
        String[] f = text.split(":", 4);
        try {
            if (f.length != 4) {
                throw new IllegalArgumentException("expected LID:QPN:PSN:GID");
            }
            return new QpEndpoint(hex(f[0]) & 0xffff, hex(f[1]) & 0xffffff, hex(f[2]) & 0xffffff,
                    Gid.parseHex(f[3].strip()));
        } catch (IllegalArgumentException e) {
            throw new PingpongException("Malformed remote address \"" + text + "\": " + e.getMessage(), e);
        }
    }

    private static int hex(String s) {
        return Integer.parseUnsignedInt(s.strip(), 16);
    }

    /**
     * The client's side: connects to {@code host:port}, sends {@code local}, reads the server's endpoint
     * and answers {@code "done"}.
     *
     * @param host  the server's name or address (every address it resolves to is tried in turn)
     * @param port  the TCP port
     * @param local this side's endpoint
     * @return the server's endpoint
     * @throws PingpongException with the C tool's messages
     */
    static QpEndpoint client(String host, int port, QpEndpoint local) throws PingpongException {
        Socket socket = connect(host, port);
        try {
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            try {
                out.write(encode(local));
                out.flush();
            } catch (IOException e) {
                throw new PingpongException("Couldn't send local address", e);
            }
            byte[] msg;
            try {
                msg = in.readNBytes(MESSAGE_BYTES);
                if (msg.length != MESSAGE_BYTES) {
                    throw new PingpongException("client read/write: short read (" + msg.length + "/" + MESSAGE_BYTES
                            + " bytes)" + NL + "Couldn't read/write remote address");
                }
                out.write(DONE);
                out.flush();
            } catch (IOException e) {
                throw new PingpongException("client read/write: " + e.getMessage() + NL
                        + "Couldn't read/write remote address", e);
            }
            return decode(msg);
        } catch (IOException e) {
            throw new PingpongException("Couldn't send local address", e);
        } finally {
            closeQuietly(socket);
        }
    }

    /**
     * The server's side: accepts one connection on {@code port}, reads the client's endpoint, lets
     * {@code connector} connect the QP, sends {@code local} and waits for the client's {@code "done"}.
     *
     * @param port      the TCP port (all local addresses)
     * @param local     this side's endpoint
     * @param connector connects the QP to the client before this side answers
     * @return the client's endpoint
     * @throws PingpongException with the C tool's messages; also when the client sends less than its message
     *                           within {@link BoundedInput#SERVER_TIMEOUT} (the C tool would wait for ever)
     */
    static QpEndpoint server(int port, QpEndpoint local, Connector connector) throws PingpongException {
        return server(port, local, connector, BoundedInput.SERVER_TIMEOUT);
    }

    /**
     * {@link #server(int, QpEndpoint, Connector)} with the time the client has for each of its messages (its
     * endpoint, then its {@code "done"}): a client silent or slow beyond it fails the exchange.
     */
    static QpEndpoint server(int port, QpEndpoint local, Connector connector, java.time.Duration timeout)
            throws PingpongException {
        Socket conn = acceptOne(port);
        try {
            OutputStream out = conn.getOutputStream();
            InputStream in = new BoundedInput(conn, timeout);
            byte[] msg;
            try {
                msg = in.readNBytes(MESSAGE_BYTES);
            } catch (IOException e) {
                throw new PingpongException("server read: " + e.getMessage() + NL + "-1/" + MESSAGE_BYTES
                        + ": Couldn't read remote address", e);
            }
            if (msg.length != MESSAGE_BYTES) {
                throw new PingpongException("server read: short read" + NL + msg.length + "/" + MESSAGE_BYTES
                        + ": Couldn't read remote address");
            }
            QpEndpoint remote = decode(msg);
            try {
                connector.connect(remote);
            } catch (PingpongException e) {
                throw e.then("Couldn't connect to remote QP");
            }
            try {
                out.write(encode(local));
                out.flush();
                if (new BoundedInput(conn, timeout).readNBytes(DONE.length).length != DONE.length) {
                    throw new PingpongException("Couldn't send/recv local address");
                }
            } catch (java.net.SocketTimeoutException e) {
                throw new PingpongException("server read: " + e.getMessage() + NL
                        + "Couldn't send/recv local address", e);
            } catch (IOException e) {
                throw new PingpongException("Couldn't send/recv local address", e);
            }
            return remote;
        } catch (IOException e) {
            throw new PingpongException("Couldn't send/recv local address", e);
        } finally {
            closeQuietly(conn);
        }
    }

    /**
     * Connects as the C clients do: every address the name resolves to in turn, then the C message.
     *
     * @param host the server's name or address
     * @param port the TCP port
     * @return the connected socket
     * @throws PingpongException "Couldn't connect to host:port" (or the resolver's failure)
     */
    static Socket connect(String host, int port) throws PingpongException {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new PingpongException("Name or service not known for " + host + ":" + port, e);
        }
        Socket socket = null;
        for (InetAddress a : addresses) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, port));
                socket = s;
                break;
            } catch (IOException e) {
                closeQuietly(s);
            }
        }
        if (socket == null) {
            throw new PingpongException("Couldn't connect to " + host + ":" + port);
        }
        return socket;
    }

    /**
     * Listens on {@code port} (all local addresses) for exactly one client, as the C servers do.
     *
     * @param port the TCP port
     * @return the client's connection
     * @throws PingpongException "Couldn't listen to port N" or "accept() failed"
     */
    static Socket acceptOne(int port) throws PingpongException {
        Socket conn;
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(port), 1);
            try {
                conn = listener.accept();
            } catch (IOException e) {
                throw new PingpongException("accept() failed", e);
            }
        } catch (IOException e) {
            throw new PingpongException("Couldn't listen to port " + port, e);
        }
        return conn;
    }

    static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing was left to send: the exchange is over either way
        }
    }
}
