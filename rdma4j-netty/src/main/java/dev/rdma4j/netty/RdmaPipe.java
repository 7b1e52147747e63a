package dev.rdma4j.netty;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionView;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The verbs side of one {@link RdmaChannel}: its protection domain, completion queue, queue pair and registered
 * buffers, the credit accounting and the data path. Every method runs on the channel's event loop (the engine's
 * thread), except {@link ReceivedBuf#deallocate()}, which hops there.
 *
 * <p>Wire format, per RDMA SEND WITH IMMEDIATE: the payload is a piece of the byte stream (possibly empty); the
 * immediate's low 16 bits give the peer that many credits (receives posted again), bit 31 marks the end of the
 * stream ({@code shutdownOutput}). The connection's private data carry each side's receive buffer count (the other
 * side's first credits) and message size (the largest message it may be sent).
 */
final class RdmaPipe {
    static final int END_OF_STREAM = 1 << 31;
    /** The sender closes: nothing more comes, and its disconnect that follows is no failure. */
    static final int CLOSE = 1 << 30;
    static final int GRANT_MASK = 0xFFFF;
    /** wr_id of a message without a send buffer (credits, end of stream). */
    private static final long CONTROL = -1;
    /** wr_id of a message sent from the application's registered buffer (held until it completes). */
    private static final long ZERO_COPY = -2;
    /** Readable bytes from which a write in registered memory is sent from it rather than copied. */
    static final int ZERO_COPY_MIN = RdmaByteBufAllocator.MIN_BLOCK;
    /** Send queue room beyond the send buffers, for control messages. */
    private static final int CONTROL_ROOM = 4;
    private static final ResourceLeakDetector<ByteBuf> LEAKS =
            ResourceLeakDetectorFactory.instance().newResourceLeakDetector(ByteBuf.class);

    /** What a side tells the other when connecting: its receive buffers and their size. */
    record Peer(int receiveBuffers, int messageSize) {
        private static final int MAGIC = 0x52344E31; // "R4N1"

        static byte[] describe(RdmaChannelConfig c) {
            return ByteBuffer.allocate(12).putInt(MAGIC).putInt(c.getReceiveBuffers()).putInt(c.getMessageSize())
                    .array();
        }

        static Peer parse(byte[] data) throws IOException {
            if (data == null || data.length < 12 || ByteBuffer.wrap(data).getInt() != MAGIC) {
                throw new IOException("the peer is no rdma4j-netty channel: its connection's private data ("
                        + (data == null ? 0 : data.length) + " bytes) lack the transport's parameters");
            }
            ByteBuffer b = ByteBuffer.wrap(data, 4, 8);
            Peer p = new Peer(b.getInt(), b.getInt());
            if (p.receiveBuffers < 2 || p.messageSize < 64) {
                throw new IOException("the peer's parameters are out of range: " + p);
            }
            return p;
        }
    }

    private final RdmaChannel channel;
    private final CompletionEngine engine;
    private final RegisteredMemory memory;
    private final CompletionQueue cq;
    private final MemoryRegion sendRegion;
    private final MemoryRegion recvRegion;
    private final int sendSlots;
    private final int recvSlots;
    private final int size;
    private final int inlineThreshold;
    private final int sqCapacity;
    private final SendBatch batch;
    private final SendBatch control = new SendBatch(1, 1);
    private final ReceiveBatch repost = new ReceiveBatch(1, 1);
    private final ByteBuffer[] sendViews;
    /** The receive region as one buffer: sliced for lent buffers, positioned for copies. */
    private final ByteBuffer recvWhole;
    private final ByteBuffer recvCopy;
    private final ArrayDeque<ByteBuf> queued = new ArrayDeque<>();
    /** Receive buffers held by the application (released from any thread). */
    private final AtomicInteger lent = new AtomicInteger();
    /** The buffers zero-copy sends in flight read from, in posting order (send completions come in that order). */
    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();
    /** Messages sent from registered application memory, without a copy (for tests). */
    long zeroCopySends;

    private Peer peer;
    private int sendSize;
    private QueuePair qp;
    private CmConnection connection;
    private long sendHead;
    private long sendTail;
    private int sqOutstanding;
    /** Messages this side may still send (the peer's receives granted and not yet consumed). */
    private int sendCredits;
    /** Receives posted again and not yet granted to the peer. */
    private int grantsOwed;
    /** Messages the peer may still send (this side's receives granted and not yet consumed). */
    private int peerCredits;
    private boolean writeBlocked;
    private boolean endPending;
    private boolean endSent;
    private boolean peerEnded;
    /** The peer said it closes: its disconnect is the normal end, not a reset. */
    private boolean peerClosed;
    private boolean closing;
    private volatile boolean tornDown;
    private boolean receiveSideFreed;
    private ScheduledFuture<?> lingerTimer;

    RdmaPipe(RdmaChannel channel, CompletionEngine engine, Context context, RegisteredMemory memory,
            RdmaChannelConfig config, Peer peer) throws VerbsException {
        this.channel = channel;
        this.engine = engine;
        this.memory = memory;
        ProtectionDomain pd = memory.protectionDomain();
        this.sendSlots = config.getSendBuffers();
        this.recvSlots = config.getReceiveBuffers();
        this.size = config.getMessageSize();
        this.inlineThreshold = config.getInlineThreshold();
        this.sqCapacity = sendSlots + CONTROL_ROOM;
        this.peer = peer;
        CompletionQueue q = null;
        MemoryRegion s = null;
        try {
            q = engine.createCompletionQueueWithHandler(context, sqCapacity + recvSlots, this::onCompletion);
            s = pd.allocate((long) sendSlots * size, AccessFlag.LOCAL_WRITE);
            this.recvRegion = pd.allocate((long) recvSlots * size, AccessFlag.LOCAL_WRITE);
        } catch (VerbsException | RuntimeException e) {
            closeQuietly(s);
            closeQuietly(q);
            throw e;
        }
        memory.add(recvRegion); // a received buffer written back (echo) leaves without a copy
        this.cq = q;
        this.sendRegion = s;
        this.batch = new SendBatch(Math.min(sendSlots, 64), 1);
        ByteBuffer sendWhole = sendRegion.segment().asByteBuffer();
        this.sendViews = new ByteBuffer[sendSlots];
        for (int i = 0; i < sendSlots; i++) {
            sendViews[i] = sendWhole.slice(i * size, size);
        }
        this.recvWhole = recvRegion.segment().asByteBuffer();
        this.recvCopy = recvWhole.duplicate();
    }

    QueuePair.Builder queuePairBuilder() {
        QueuePair.Builder b = QueuePair.builder(memory.protectionDomain(), QpType.RC).completionQueue(cq).capacity(sqCapacity, recvSlots)
                .maxSge(1, 1);
        return inlineThreshold > 0 ? b.maxInlineData(inlineThreshold) : b;
    }

    /** Before connecting: every receive buffer posted, so the peer's first credits are real. */
    void start(QueuePair queuePair) throws VerbsException {
        this.qp = queuePair;
        try (ReceiveBatch all = new ReceiveBatch(recvSlots, 1)) {
            for (int i = 0; i < recvSlots; i++) {
                all.receive(i, recvRegion, (long) i * size, size);
            }
            queuePair.post(all);
        }
        peerCredits = recvSlots;
    }

    /** ESTABLISHED: the peer's parameters are known (the client learns them from the accept's private data). */
    void established(CmConnection c) {
        this.connection = c;
        if (peer == null) {
            try {
                peer = Peer.parse(c.peerPrivateData());
            } catch (IOException e) {
                channel.broken(e);
                return;
            }
        }
        sendCredits = peer.receiveBuffers;
        sendSize = Math.min(size, peer.messageSize);
    }

    // ---------------------------------------------------------------- sending

    /** Whether a message may go now: a credit (the last one only with credits to give back) and queue room. */
    private boolean canSend(boolean data) {
        if (peer == null || closing || sqOutstanding >= sqCapacity) {
            return false;
        }
        if (data && sendHead - sendTail >= sendSlots) {
            return false;
        }
        return sendCredits >= 2 || (sendCredits == 1 && grantsOwed > 0);
    }

    private int takeGrants(int flags) {
        int g = Math.min(grantsOwed, GRANT_MASK);
        grantsOwed -= g;
        peerCredits += g;
        return g | flags;
    }

    /**
     * Copies what the outbound buffer holds into free send buffers, packing small writes and cutting large ones
     * into messages of at most the peer's size, and posts them as one list. Stops when credits or buffers run
     * out: the rest waits in the outbound buffer until a completion brings them back.
     */
    void write(ChannelOutboundBuffer in) throws IOException {
        int n = 0;
        for (;;) {
            Object m = in.current();
            if (m == null) {
                break;
            }
            if (!((ByteBuf) m).isReadable()) {
                in.remove();
                continue;
            }
            ByteBuf first = (ByteBuf) m;
            RegisteredMemory.Located at = zeroCopy(first);
            if (!canSend(at == null)) {
                break;
            }
            if (at != null) { // straight from the application's registered memory: held until the send completes
                int len = Math.min(first.readableBytes(), sendSize);
                batch.sendWithImmediate(ZERO_COPY, at.region(), at.offset(), len, takeGrants(0));
                held.add(first.retain());
                in.removeBytes(len);
                zeroCopySends++;
                sendCredits--;
                sqOutstanding++;
                if (++n == batch.capacity()) {
                    post(batch);
                    n = 0;
                }
                continue;
            }
            int slot = (int) (sendHead % sendSlots);
            ByteBuffer v = sendViews[slot];
            v.clear().limit(sendSize);
            while (v.hasRemaining()) {
                Object c = in.current();
                if (!(c instanceof ByteBuf b)) {
                    break;
                }
                int take = Math.min(b.readableBytes(), v.remaining());
                if (take == 0) {
                    in.remove();
                    continue;
                }
                if (v.position() > 0 && zeroCopy(b) != null) {
                    break; // it goes on its own, without a copy
                }
                int limit = v.limit();
                v.limit(v.position() + take);
                b.getBytes(b.readerIndex(), v);
                v.limit(limit);
                in.removeBytes(take);
            }
            int len = v.position();
            batch.sendWithImmediate(slot, sendRegion, (long) slot * size, len, takeGrants(0));
            if (len <= inlineThreshold) {
                batch.inline();
            }
            sendHead++;
            sendCredits--;
            sqOutstanding++;
            if (++n == batch.capacity()) {
                post(batch);
                n = 0;
            }
        }
        writeBlocked = in.current() != null;
        if (n > 0) {
            post(batch);
        }
        if (endPending && !writeBlocked) {
            trySendEnd();
        }
    }

    /** Where {@code b}'s next message lies in registered memory of this loop, if it is large enough to be sent so. */
    private RegisteredMemory.Located zeroCopy(ByteBuf b) {
        int readable = b.readableBytes();
        return readable >= ZERO_COPY_MIN ? memory.locate(b, Math.min(readable, sendSize)) : null;
    }

    private void post(SendBatch b) throws IOException {
        int rc = qp.tryPost(b);
        b.clear();
        if (rc != 0) {
            throw new IOException("ibv_post_send failed on " + channel + ": errno " + rc);
        }
    }

    /** A message without data: credits for the peer, and the end-of-stream mark when {@code flags} say so. */
    private boolean sendControl(int flags) {
        boolean last = (flags & CLOSE) != 0; // nothing follows a close: its last credit needs none back
        if (last ? peer == null || closing || sqOutstanding >= sqCapacity || sendCredits < 1 : !canSend(false)) {
            return false;
        }
        control.sendWithImmediate(CONTROL, sendRegion, 0, 0, takeGrants(flags));
        sendCredits--;
        sqOutstanding++;
        try {
            post(control);
        } catch (IOException e) {
            channel.broken(e);
            return false;
        }
        return true;
    }

    /** shutdownOutput: the end-of-stream mark goes after what is written (and flushed) before it. */
    void sendEndOfStream() {
        endPending = true;
        if (!writeBlocked) {
            trySendEnd();
        }
    }

    private void trySendEnd() {
        if (!endSent && sendControl(END_OF_STREAM)) {
            endPending = false;
            endSent = true;
        }
    }

    /** Whether writes wait for credits or buffers that are now back. */
    boolean wantsFlush() {
        return writeBlocked && canSend(true);
    }

    /**
     * After a loop pass: the end-of-stream mark if it waited, and credits for the peer when they pile up or the
     * peer may be waiting for them (it cannot send with fewer than two unless it has credits of its own to give).
     */
    void afterIo() {
        if (closing || peer == null) {
            return;
        }
        if (endPending && !writeBlocked) {
            trySendEnd();
        }
        if (grantsOwed > 0 && (grantsOwed >= Math.max(1, recvSlots / 2) || peerCredits <= 1)) {
            sendControl(0);
        }
    }

    // ---------------------------------------------------------------- completions (engine thread = event loop)

    private void onCompletion(CompletionView wc) {
        if (tornDown) {
            return;
        }
        if (wc.isReceive()) {
            onReceive(wc);
        } else {
            onSent(wc);
        }
    }

    private void onSent(CompletionView wc) {
        sqOutstanding--;
        long id = wc.wrId();
        if (id >= 0) {
            sendTail++;
        } else if (id == ZERO_COPY) {
            ByteBuf b = held.poll();
            if (b != null) {
                b.release();
            }
        }
        if (!wc.isSuccess()) {
            failed("send", wc);
            return;
        }
        if (closing) {
            if (sqOutstanding == 0) {
                teardown();
            }
            return;
        }
        if (writeBlocked || endPending) {
            channel.afterIoNeeded();
        }
    }

    private void onReceive(CompletionView wc) {
        if (!wc.isSuccess()) {
            failed("receive", wc);
            return;
        }
        int slot = (int) wc.wrId();
        peerCredits--;
        int imm = wc.hasImmediate() ? wc.immediateData() : 0;
        int grants = imm & GRANT_MASK;
        if (grants > 0) {
            sendCredits += grants;
            if (writeBlocked || endPending) {
                channel.afterIoNeeded();
            }
        }
        int len = wc.byteLength();
        if (len > 0 && !closing && !peerEnded) {
            deliver(slot, len);
        } else {
            repost(slot);
        }
        if ((imm & CLOSE) != 0) {
            peerClosed = true;
        }
        if ((imm & END_OF_STREAM) != 0 && !peerEnded) {
            peerEnded = true;
            if (queued.isEmpty()) {
                channel.peerShutdownOutput();
            }
        }
    }

    private void failed(String what, CompletionView wc) {
        if (closing) {
            return; // flushed by the close: expected
        }
        if (wc.status() == WcStatus.WR_FLUSH_ERR) { // no error of its own: the QP went to ERROR under it
            channel.ended();
            return;
        }
        channel.broken(new IOException("RDMA " + what + " on " + channel + " failed: " + wc.status() + " ("
                + wc.status().text() + ")"));
    }

    // ---------------------------------------------------------------- receiving

    /** Lends the receive buffer itself while fewer than half are lent; copies otherwise (the buffer is reposted). */
    private void deliver(int slot, int len) {
        int off = slot * size;
        ByteBuf buf;
        if (lent.get() < recvSlots / 2) {
            lent.incrementAndGet();
            buf = new ReceivedBuf(channel.alloc(), this, slot, recvWhole.slice(off, len));
        } else {
            buf = channel.alloc().directBuffer(len, len);
            recvCopy.clear().position(off).limit(off + len);
            buf.writeBytes(recvCopy);
            repost(slot);
        }
        channel.afterIoNeeded(); // runs the loop's after-I/O pass: credits may be due
        if (queued.isEmpty() && channel.readRequested()) {
            channel.received(buf);
        } else {
            queued.add(buf);
        }
    }

    boolean hasQueuedReads() {
        return !queued.isEmpty();
    }

    /** Fires the queued reads while the channel wants them; then the peer's end of stream, if it came after them. */
    void deliverQueued() {
        while (!queued.isEmpty() && channel.readRequested()) {
            channel.received(queued.poll());
        }
        if (queued.isEmpty() && peerEnded) {
            channel.peerShutdownOutput();
        }
    }

    void dropQueuedReads() {
        ByteBuf b;
        while ((b = queued.poll()) != null) {
            b.release();
        }
    }

    /** Posts receive buffer {@code slot} again: a credit owed to the peer. */
    private void repost(int slot) {
        if (closing) {
            return;
        }
        repost.clear().receive(slot, recvRegion, (long) slot * size, size);
        int rc = qp.tryPost(repost);
        if (rc != 0) {
            channel.broken(new IOException("ibv_post_recv failed on " + channel + ": errno " + rc));
            return;
        }
        grantsOwed++;
    }

    /** A lent buffer was released (any thread): posted again on the loop, or freed if the pipe is gone. */
    void returned(int slot) {
        try {
            if (channel.eventLoop().inEventLoop()) {
                returnedOnLoop(slot);
            } else {
                channel.eventLoop().execute(() -> returnedOnLoop(slot));
            }
        } catch (RejectedExecutionException loopGone) { // the loop shut down: it tore the pipe down first
            if (lent.decrementAndGet() == 0 && tornDown) {
                freeReceiveSide();
            }
        }
    }

    private void returnedOnLoop(int slot) {
        lent.decrementAndGet();
        if (tornDown) {
            if (lent.get() == 0) {
                freeReceiveSide();
            }
            return;
        }
        repost(slot);
        channel.afterIoNeeded();
    }

    /**
     * Whether the peer announced its close before its disconnect; otherwise the disconnect is a reset (its process
     * was killed, or its host or the link is gone) and the channel reports it.
     */
    boolean peerClosed() {
        return peerClosed;
    }

    /** Completes (on the loop) once every completion already in the CQ was handled, then runs {@code then}. */
    void drainThen(Runnable then) {
        engine.drained(cq).whenComplete((v, e) -> then.run());
    }

    // ---------------------------------------------------------------- close

    /**
     * Stops sending and receiving; after the messages already posted were acknowledged (at most
     * {@code lingerMillis}), disconnects and frees everything but receive buffers the application still holds.
     */
    void close(long lingerMillis) {
        if (closing) {
            return;
        }
        if (lingerMillis > 0 && connection != null && !peerClosed) {
            // tell the peer this is a close, not a reset (when a credit allows; else it sees a reset)
            sendControl(CLOSE | END_OF_STREAM);
        }
        closing = true;
        dropQueuedReads();
        if (lingerMillis > 0 && sqOutstanding > 0 && connection != null) {
            try {
                lingerTimer = channel.eventLoop().schedule(this::teardown, lingerMillis, TimeUnit.MILLISECONDS);
                return;
            } catch (RejectedExecutionException loopClosing) {
                // no timer to be had: tear down now
            }
        }
        teardown();
    }

    private void teardown() {
        if (tornDown) {
            return;
        }
        tornDown = true;
        if (lingerTimer != null) {
            lingerTimer.cancel(false);
        }
        CmConnection c = connection;
        if (c != null) {
            try {
                c.disconnect();
            } catch (VerbsException | RuntimeException e) {
                // already disconnected by the peer, or the id is gone
            }
            c.close(); // rdma_destroy_qp, rdma_destroy_id
        } else if (qp != null) {
            closeQuietly(qp);
        }
        ByteBuf h; // the QP is gone: the device reads none of them any more
        while ((h = held.poll()) != null) {
            h.release();
        }
        closeQuietly(cq);
        batch.close();
        control.close();
        repost.close();
        closeQuietly(sendRegion);
        if (lent.get() == 0) {
            freeReceiveSide();
        }
    }

    private synchronized void freeReceiveSide() {
        if (receiveSideFreed) {
            return;
        }
        receiveSideFreed = true;
        memory.remove(recvRegion);
        closeQuietly(recvRegion);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            System.getLogger("dev.rdma4j.netty").log(System.Logger.Level.WARNING, "closing " + c + " failed", e);
        }
    }

    /** For tests: receive buffers the application holds. */
    int lentBuffers() {
        return lent.get();
    }

    /**
     * A received message in its registered receive buffer: released (reference count 0), the buffer is posted again.
     * Tracked by Netty's leak detector.
     */
    static final class ReceivedBuf extends UnpooledDirectByteBuf {
        private final RdmaPipe pipe;
        private final int slot;
        private final ResourceLeakTracker<ByteBuf> leak;

        ReceivedBuf(ByteBufAllocator alloc, RdmaPipe pipe, int slot, ByteBuffer data) {
            super(alloc, data, data.remaining());
            this.pipe = pipe;
            this.slot = slot;
            this.leak = LEAKS.track(this);
        }

        @Override
        protected void deallocate() {
            super.deallocate(); // the memory is the receive region's: nothing freed
            if (leak != null) {
                leak.close(this);
            }
            pipe.returned(slot);
        }
    }
}
