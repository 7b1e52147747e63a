package dev.rdma4j.net;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A received message: a read-only view of the receive buffer it landed in. {@link #close()} gives the buffer
 * back, which posts it again for the next message ({@code ibv_post_recv}, or {@code ibv_post_srq_recv} on a
 * shared receive queue) and grants it to the peer; until then that buffer receives nothing, so close every
 * message (try-with-resources) or the peer, out of credits, stops sending. The bytes are the device's until closed: keep a copy
 * ({@link #bytes()}) if they must outlive the message.
 *
 * <p>Thread-safe: {@link #close()} is idempotent and may race other threads; reading after it throws
 * {@link IllegalStateException} (the buffer may hold the next message already).
 */
public final class Message implements AutoCloseable {
    /** What gives a buffer back. */
    @FunctionalInterface
    interface Release {
        void release(long token);
    }

    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(Message.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Release release;
    private final long token;
    private final MemorySegment data;
    /** Set once by {@link #close()} (through {@link #CLOSED}: no object of its own per message). */
    private volatile boolean closed;

    /** A message of {@code data}, made read-only here unless it is (the connection hands views that are). */
    Message(Release release, long token, MemorySegment data) {
        this.release = release;
        this.token = token;
        this.data = data.isReadOnly() ? data : data.asReadOnly();
    }

    /**
     * The received bytes, exactly {@link #length()} of them (the completion's {@code byte_len}).
     *
     * @return a read-only view of the receive buffer
     * @throws IllegalStateException if the message was closed
     */
    public MemorySegment data() {
        ensureOpen();
        return data;
    }

    /**
     * How many bytes arrived.
     *
     * @return the length
     */
    public int length() {
        return (int) data.byteSize();
    }

    /**
     * A copy of the bytes.
     *
     * @return a new array of {@link #length()} bytes
     * @throws IllegalStateException if the message was closed
     */
    public byte[] bytes() {
        ensureOpen();
        return data.toArray(ValueLayout.JAVA_BYTE);
    }

    /** Gives the buffer back to be posted again. Idempotent. */
    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, false, true)) {
            release.release(token);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the message was closed: its buffer went back to receive another");
        }
    }

    @Override
    public String toString() {
        return "Message[" + length() + " bytes" + (closed ? ", closed" : "") + "]";
    }
}
