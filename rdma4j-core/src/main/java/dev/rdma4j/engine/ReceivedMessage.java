package dev.rdma4j.engine;

import dev.rdma4j.WorkCompletion;
import java.lang.foreign.MemorySegment;

/**
 * One message from a {@link ReceiveStream}: the bytes (a view of the stream's buffer slot) and the
 * completion. The slot is reposted as a receive only when {@link #release()} is called: holding
 * messages is how a slow consumer pushes back on the sender.
 *
 * <p>Threading: hand it to one thread at a time; {@code release()} may be called from any thread, once.
 */
public final class ReceivedMessage {
    private final ReceiveStream stream;
    private final int slot;
    private final MemorySegment data;
    private final WorkCompletion completion;
    private boolean released;

    ReceivedMessage(ReceiveStream stream, int slot, MemorySegment data, WorkCompletion completion) {
        this.stream = stream;
        this.slot = slot;
        this.data = data;
        this.completion = completion;
    }

    /**
     * The received bytes, valid until {@link #release()}.
     *
     * @return a view of {@code byteLength} bytes of the slot
     */
    public MemorySegment data() {
        return data;
    }

    /**
     * The receive completion (byte length, immediate data, source QP ...).
     *
     * @return the completion
     */
    public WorkCompletion completion() {
        return completion;
    }

    /** Gives the slot back: it is posted as a receive again. Idempotent. */
    public void release() {
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
        }
        stream.repost(slot);
    }
}
