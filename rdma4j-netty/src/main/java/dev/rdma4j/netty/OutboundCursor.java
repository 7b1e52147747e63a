package dev.rdma4j.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import java.io.IOException;
import java.util.Arrays;

/**
 * Where an {@link RdmaPipe} is in its channel's outbound buffer, and when posted bytes may leave it.
 *
 * <p>Bytes copied into a send buffer, or sent from memory only the outbound buffer holds, leave the outbound buffer
 * (their writes complete) as they are posted. Bytes sent from registered memory that someone else holds too (a slice
 * of a buffer whose other slices, or the buffer itself, are still held: gRPC's HTTP/2 DATA frames are such slices)
 * must not be changed until the device has read them; by Netty's contract nobody changes a written buffer before its
 * write completes, so those bytes stay in the outbound buffer (their writes incomplete) until the send that carries
 * them completes: the message <em>waits</em>. Writes after such bytes stay too (Netty removes from the head only),
 * but are posted all the same: this cursor walks the flushed messages beyond the posted bytes, and the messages
 * posted meanwhile are recorded in posting order with their byte counts, so that each completed waiting message lets
 * the bytes up to the next waiting one go, in the next write pass ({@link #begin}).
 *
 * <p>Bytes that wait count towards the channel's write buffer water marks as long as they are in flight.
 *
 * <p>Threading: the channel's event loop only.
 */
final class OutboundCursor {
    /** The most flushed messages one pass looks at beyond the posted bytes (the next pass goes on). */
    private static final int MAX_VIEW = 1024;

    private ChannelOutboundBuffer in;
    /** The channel's outbound buffer (one for its life), for {@link #closing()}, which runs outside a pass. */
    private ChannelOutboundBuffer outbound;
    /** Bytes at the head of the outbound buffer posted and not yet removed (0: the cursor is at the head). */
    private long posted;
    /** Of those, bytes whose messages are done (and every message before them): removed by the next pass. */
    private long removable;
    /** Bytes of the message being built that stay in the outbound buffer for now. */
    private int messageBytes;
    /** The flushed messages from the head, while the cursor is beyond it: the view, its size, where the cursor is. */
    private ByteBuf[] view = new ByteBuf[16];
    private int viewed;
    private boolean truncated;
    private int index;
    private int offset;
    private int skip;
    private final ChannelOutboundBuffer.MessageProcessor collect = this::collect;
    /** Posted messages from the oldest waiting one on, in posting order: bytes, and whether they still wait. */
    private final int[] bytes;
    private final boolean[] waiting;
    private int head;
    private int size;

    /** @param maxMessages the most messages in flight (the send queue's depth) */
    OutboundCursor(int maxMessages) {
        this.bytes = new int[maxMessages + 1];
        this.waiting = new boolean[maxMessages + 1];
    }

    /** A write pass begins: the bytes of completed messages leave (their writes complete); finds the next bytes. */
    void begin(ChannelOutboundBuffer buffer) throws IOException {
        this.in = buffer;
        this.outbound = buffer;
        if (removable > 0) {
            long r = removable;
            removable = 0;
            posted -= r;
            buffer.removeBytes(r); // completes writes: their listeners may write (added after, flushed later)
        }
        viewed = 0;
        truncated = false;
        if (posted > 0) {
            look();
        }
    }

    /**
     * The channel closes, lingering until what was posted is acknowledged: the posted bytes count as written, as a
     * socket's bytes in its kernel buffer do, so their writes complete now, successfully, before Netty fails the
     * writes not posted (the pipe still holds every buffer the device may read).
     */
    void closing() {
        ChannelOutboundBuffer b = outbound;
        long p = posted;
        posted = 0;
        removable = 0;
        messageBytes = 0;
        head = 0;
        size = 0;
        if (b != null && p > 0) {
            b.removeBytes(p);
        }
    }

    /** The pass ended: lets go of the view. */
    void end() {
        Arrays.fill(view, 0, viewed, null);
        viewed = 0;
        in = null;
    }

    /** The next buffer with bytes to post, or null when every flushed byte is posted (or the view is at its end). */
    ByteBuf current() {
        if (posted == 0) {
            for (;;) {
                Object m = in.current();
                if (!(m instanceof ByteBuf b)) {
                    return null;
                }
                if (b.isReadable()) {
                    return b;
                }
                in.remove();
            }
        }
        while (index < viewed && view[index].readableBytes() - offset <= 0) {
            index++;
            offset = 0;
        }
        return index < viewed ? view[index] : null;
    }

    /** Bytes of {@link #current()} already posted, from its reader index. */
    int offset() {
        return posted == 0 ? 0 : offset;
    }

    /** Whether flushed bytes remain to be posted (a pass stopped before them). */
    boolean hasUnposted() {
        return current() != null || truncated;
    }

    /**
     * {@code n} bytes of {@link #current()} are in the message being built.
     *
     * @param keep whether they must stay in the outbound buffer until the message's send completes
     */
    void take(int n, boolean keep) throws IOException {
        if (posted == 0 && !keep) {
            in.removeBytes(n);
            return;
        }
        messageBytes += n;
        if (posted == 0) { // the cursor leaves the head: the flushed messages from there on
            posted = n;
            look();
        } else {
            posted += n;
            offset += n;
        }
    }

    /**
     * The message being built was posted.
     *
     * @param waits whether its bytes leave only when its send completes ({@link #sent()})
     */
    void posted(boolean waits) {
        int n = messageBytes;
        if (n == 0) {
            return;
        }
        messageBytes = 0;
        if (!waits && size == 0) {
            removable += n;
            return;
        }
        int i = (head + size++) % bytes.length;
        bytes[i] = n;
        waiting[i] = waits;
    }

    /** The oldest waiting message's send completed (sends complete in posting order). */
    void sent() {
        for (int k = 0; k < size; k++) {
            int i = (head + k) % bytes.length;
            if (waiting[i]) {
                waiting[i] = false;
                break;
            }
        }
        while (size > 0 && !waiting[head]) {
            removable += bytes[head];
            head = (head + 1) % bytes.length;
            size--;
        }
    }

    /** Whether bytes wait for a write pass to leave the outbound buffer. */
    boolean hasRemovable() {
        return removable > 0;
    }

    /** The flushed messages from the head, and the cursor {@link #posted} bytes into them. */
    private void look() throws IOException {
        Arrays.fill(view, 0, viewed, null);
        viewed = 0;
        truncated = false;
        index = 0;
        offset = 0;
        skip = (int) Math.min(posted, Integer.MAX_VALUE);
        try {
            in.forEachFlushedMessage(collect);
        } catch (Exception e) {
            throw new IOException("reading the outbound buffer failed", e);
        }
        skip = 0;
    }

    /** One flushed message: skipped while in the posted bytes, viewed after. */
    private boolean collect(Object m) {
        if (!(m instanceof ByteBuf b)) {
            return false;
        }
        int r = b.readableBytes();
        if (skip > 0) {
            if (skip >= r) { // posted entirely
                skip -= r;
                return true;
            }
            offset = skip; // posted in part: the cursor is in it, and nothing after it is posted
            skip = 0;
        }
        if (viewed == view.length) {
            if (viewed == MAX_VIEW) {
                truncated = true;
                return false;
            }
            view = Arrays.copyOf(view, viewed * 2);
        }
        view[viewed++] = b;
        return true;
    }
}
