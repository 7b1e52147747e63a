package dev.rdma4j.tools;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

/**
 * A socket's input with one deadline for all its reads: the tools' servers read a client's out-of-band
 * message through it, so a client that sends nothing, or a byte now and then (slow-loris), ends in a
 * {@link SocketTimeoutException} at the deadline instead of holding the server for ever. The C tools have no
 * such bound; the message they print is the same otherwise.
 */
public final class BoundedInput extends InputStream {
    /** How long a tool's server waits for each out-of-band message of a client once it connected. */
    public static final Duration SERVER_TIMEOUT = Duration.ofSeconds(60);

    private final Socket socket;
    private final InputStream in;
    private final Duration timeout;
    private final long deadline;
    private long count;

    /**
     * Starts the clock.
     *
     * @param socket  the connected socket (its read timeout is changed by each read)
     * @param timeout for all the reads through this stream
     * @throws IOException if the socket is closed
     */
    public BoundedInput(Socket socket, Duration timeout) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.timeout = timeout;
        this.deadline = System.nanoTime() + timeout.toNanos();
    }

    private void arm() throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw timedOut(null);
        }
        socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)));
    }

    private SocketTimeoutException timedOut(SocketTimeoutException cause) {
        SocketTimeoutException e = new SocketTimeoutException("timed out: the peer sent " + count
                + " bytes in " + timeout.toSeconds() + " s");
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
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
            throw timedOut(e);
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
            throw timedOut(e);
        }
    }
}
