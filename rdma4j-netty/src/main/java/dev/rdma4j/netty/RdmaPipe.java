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
 * The verbs side of one {@link RdmaChannel}: its completion queue, queue pair and registered buffers (in the event
 * loop's shared {@link RegisteredMemory}), the credit accounting and the data path. Every method runs on the channel's
 * event loop (the engine's thread), except {@link ReceivedBuf#deallocate()}, which hops there.
 *
 * <p>Wire format, per RDMA SEND WITH IMMEDIATE: the payload is a piece of the byte stream (possibly empty). The
 * immediate's bits 0-15 give the peer that many data credits (receives posted again), bits 16-19 that many control
 * credits, bit 29 says this message spent a control credit, bit 30 that the sender closes (its disconnect is then no
 * reset), bit 31 ends the stream ({@code shutdownOutput}). Each side posts {@code receiveBuffers} receives for data
 * and {@link #CONTROL_RECEIVES} more for messages that only carry credits or marks; the connection's private data
 * carry each side's data receive count and message size.
 *
 * <p>Why this cannot deadlock or meet RNR: a data message is sent only with a data credit, a credit-only message only
 * with a control credit, so no more messages are ever in flight than receives posted. A credit-only message costs the
 * peer no data credit, so answering one never needs another (no ping-pong); its control credit comes back with
 * whatever the peer sends next. A side sends credits on their own when half its data receives are owed, or when the
 * peer may have none left; and a peer that has none left sent every message it could, each returning the control
 * credits it owed, so the credits can always go.
 */
final class RdmaPipe {
    static final int DATA_GRANTS = 0xFFFF;
    static final int CONTROL_GRANTS_SHIFT = 16;
    static final int CONTROL_GRANTS = 0xF << CONTROL_GRANTS_SHIFT;
    static final int CONTROL = 1 << 29;
    static final int CLOSE = 1 << 30;
    static final int END_OF_STREAM = 1 << 31;
    /** Receives beyond the data credits, for credit-only and mark messages. */
    static final int CONTROL_RECEIVES = 2;
    /** wr_id of a message without a send buffer (credits, marks). */
    private static final long MARK = -1;
    /** wr_id of a message sent from the application's registered buffer (held until it completes). */
    private static final long ZERO_COPY = -2;
    /** Readable bytes from which a write in registered memory is sent from it rather than copied. */
    static final int ZERO_COPY_MIN = RdmaByteBufAllocator.MIN_BLOCK;
    /** Send queue room beyond the send buffers, for zero-copy and mark messages. */
    private static final int EXTRA_SENDS = 16;
    private static final ResourceLeakDetector<ByteBuf> LEAKS =
            ResourceLeakDetectorFactory.instance().newResourceLeakDetector(ByteBuf.class);

    /** A connection's sizes, read once from the channel's options: what is posted is what is announced. */
    record Sizes(int receiveBuffers, int sendBuffers, int messageSize, int inlineThreshold, boolean busyPoll) {
        static Sizes of(RdmaChannelConfig c) {
            return new Sizes(c.getReceiveBuffers(), c.getSendBuffers(), c.getMessageSize(), c.getInlineThreshold(),
                    c.isBusyPoll());
        }
    }

    /** What a side tells the other when connecting: its data receive buffers and their size. */
    record Peer(int receiveBuffers, int messageSize) {
        private static final int MAGIC = 0x52344E32; // "R4N2"

        static byte[] describe(Sizes s) {
            return ByteBuffer.allocate(12).putInt(MAGIC).putInt(s.receiveBuffers()).putInt(s.messageSize()).array();
        }

        static Peer parse(byte[] data) throws IOException {
            if (data == null || data.length < 12 || ByteBuffer.wrap(data).getInt() != MAGIC) {
                throw new IOException("the peer is no rdma4j-netty channel of this version: its connection's private"
                        + " data (" + (data == null ? 0 : data.length) + " bytes) lack the transport's parameters");
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
    private final RdmaIoHandler handler;
    private final CompletionQueue cq;
    private final MemoryRegion sendRegion;
    private final MemoryRegion recvRegion;
    private final int sendSlots;
    private final int dataReceives;
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
    /** Messages received and not yet delivered (reads not requested): their slots and lengths, in order. */
    private final int[] pendingSlot;
    private final int[] pendingLen;
    private int pendingHead;
    private int pendingCount;
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
    /** Data messages this side may still send (the peer's data receives granted and not yet consumed). */
    private int sendCredits;
    /** Credit-only / mark messages this side may still send. */
    private int controlCredits = CONTROL_RECEIVES;
    /** Data receives posted again and not yet granted to the peer. */
    private int dataGrantsOwed;
    /** Control receives posted again and not yet granted to the peer. */
    private int controlGrantsOwed;
    /** Data messages the peer may still send (this side's data receives granted and not yet consumed). */
    private int peerCredits;
    private boolean writeBlocked;
    private boolean endPending;
    private boolean endSent;
    private boolean peerEnded;
    private boolean peerEndReported;
    /** The peer said it closes: its disconnect is the normal end, not a reset. */
    private boolean peerClosed;
    private boolean closing;
    private volatile boolean tornDown;
    private boolean receiveSideFreed;
    private ScheduledFuture<?> lingerTimer;

    RdmaPipe(RdmaChannel channel, RdmaIoHandler handler, Context context, RegisteredMemory memory, Sizes sizes,
            Peer peer) throws VerbsException {
        this.channel = channel;
        this.handler = handler;
        this.engine = handler.engine();
        this.memory = memory;
        ProtectionDomain pd = memory.protectionDomain();
        this.sendSlots = sizes.sendBuffers();
        this.dataReceives = sizes.receiveBuffers();
        this.recvSlots = dataReceives + CONTROL_RECEIVES;
        this.size = sizes.messageSize();
        this.inlineThreshold = sizes.inlineThreshold();
        this.sqCapacity = sendSlots + EXTRA_SENDS;
        this.peer = peer;
        this.pendingSlot = new int[recvSlots];
        this.pendingLen = new int[recvSlots];
        CompletionQueue q = null;
        MemoryRegion s = null;
        try {
            q = engine.createCompletionQueueWithHandler(context, sqCapacity + recvSlots, this::onCompletion);
            if (sizes.busyPoll()) {
                engine.busyPoll(q, true);
            }
            s = pd.allocate((long) sendSlots * size, AccessFlag.LOCAL_WRITE);
            this.recvRegion = pd.allocate((long) recvSlots * size, AccessFlag.LOCAL_WRITE);
        } catch (VerbsException | RuntimeException e) {
            closeQuietly(s);
            closeQuietly(q);
            throw e;
        }
        this.cq = q;
        this.sendRegion = s;
        memory.add(recvRegion); // a received buffer written back (echo) leaves without a copy
        this.batch = new SendBatch(Math.min(sqCapacity, 64), 1);
        ByteBuffer sendWhole = sendRegion.segment().asByteBuffer();
        this.sendViews = new ByteBuffer[sendSlots];
        for (int i = 0; i < sendSlots; i++) {
            sendViews[i] = sendWhole.slice(i * size, size);
        }
        this.recvWhole = recvRegion.segment().asByteBuffer();
        this.recvCopy = recvWhole.duplicate();
        handler.pipeOpened(this);
    }

    QueuePair.Builder queuePairBuilder() {
        QueuePair.Builder b = QueuePair.builder(memory.protectionDomain(), QpType.RC).completionQueue(cq)
                .capacity(sqCapacity, recvSlots).maxSge(1, 1);
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
        peerCredits = dataReceives;
    }

    /**
     * ESTABLISHED: the peer's parameters are known (the client learns them from the accept's private data).
     *
     * @return false when they are unusable (the channel was told, and closes)
     */
    boolean established(CmConnection c) {
        this.connection = c;
        if (peer == null) {
            try {
                peer = Peer.parse(c.peerPrivateData());
            } catch (IOException e) {
                channel.broken(e);
                return false;
            }
        }
        sendCredits = peer.receiveBuffers;
        sendSize = Math.min(size, peer.messageSize);
        return true;
    }

    // ---------------------------------------------------------------- sending

    /** Whether a data message may go now: a data credit, queue room, and a send buffer when it is copied. */
    private boolean canSendData(boolean copied) {
        if (peer == null || closing || sqOutstanding >= sqCapacity || sendCredits < 1) {
            return false;
        }
        return !copied || sendHead - sendTail < sendSlots;
    }

    /** The credits owed to the peer, handed over in the immediate of the message being sent, with {@code flags}. */
    private int takeGrants(int flags) {
        int g = Math.min(dataGrantsOwed, DATA_GRANTS);
        int c = Math.min(controlGrantsOwed, CONTROL_GRANTS >>> CONTROL_GRANTS_SHIFT);
        dataGrantsOwed -= g;
        controlGrantsOwed -= c;
        peerCredits += g;
        return g | c << CONTROL_GRANTS_SHIFT | flags;
    }

    /**
     * Copies what the outbound buffer holds into free send buffers, packing small writes and cutting large ones
     * into messages of at most the peer's size, and posts them as one list; a large write in registered memory (that
     * only the outbound buffer holds) goes from its own memory instead. Stops when credits or buffers run out: the
     * rest waits in the outbound buffer until a completion brings them back.
     */
    void write(ChannelOutboundBuffer in) throws IOException {
        int n = 0;
        for (;;) {
            Object m = in.current();
            if (m == null) {
                break;
            }
            ByteBuf first = (ByteBuf) m;
            if (!first.isReadable()) {
                in.remove();
                continue;
            }
            RegisteredMemory.Located at = zeroCopy(first);
            if (!canSendData(at == null)) {
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

    /**
     * Where {@code b}'s next message lies in registered memory of this loop, if it is large enough to be sent so and
     * only the outbound buffer holds it (its write completes when it is posted: nobody may change it after that).
     */
    private RegisteredMemory.Located zeroCopy(ByteBuf b) {
        int readable = b.readableBytes();
        return readable >= ZERO_COPY_MIN && b.refCnt() == 1 ? memory.locate(b, Math.min(readable, sendSize)) : null;
    }

    private void post(SendBatch b) throws IOException {
        int rc = qp.tryPost(b);
        b.clear();
        if (rc != 0) {
            throw VerbsException.of("ibv_post_send", rc, channel.toString());
        }
    }

    /**
     * A message without data: credits for the peer, with {@code flags} (end of stream, close). It spends a control
     * credit; marks may spend a data credit instead when no control credit is left.
     *
     * @return whether it was posted
     */
    private boolean sendMark(int flags) {
        if (peer == null || closing || sqOutstanding >= sqCapacity) {
            return false;
        }
        int spend;
        if (controlCredits > 0) {
            controlCredits--;
            spend = CONTROL;
        } else if (flags != 0 && sendCredits > 0) {
            sendCredits--;
            spend = 0;
        } else {
            return false;
        }
        control.sendWithImmediate(MARK, sendRegion, 0, 0, takeGrants(flags | spend));
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
        if (!endSent && sendMark(END_OF_STREAM)) {
            endPending = false;
            endSent = true;
        }
    }

    /** Whether writes wait for credits or buffers that are now back. */
    boolean wantsFlush() {
        return writeBlocked && canSendData(false);
    }

    /**
     * After a loop pass: the end-of-stream mark if it waited, and credits for the peer when half the data receives
     * are owed or the peer may have none left.
     */
    void afterIo() {
        if (closing || peer == null) {
            return;
        }
        if (endPending && !writeBlocked) {
            trySendEnd();
        }
        if (dataGrantsOwed > 0 && (dataGrantsOwed >= Math.max(1, dataReceives / 2) || peerCredits <= 0)) {
            sendMark(0);
        }
    }

    /** Whether something is due in the after-I/O pass. */
    private boolean afterIoDue() {
        return dataGrantsOwed > 0 || writeBlocked || endPending || (peerEnded && !peerEndReported);
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
        if (!tornDown && afterIoDue()) {
            channel.afterIoNeeded();
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
        if (closing) { // lingering: tear down once the last send is done, whatever its outcome
            if (sqOutstanding == 0) {
                teardown();
            }
            return;
        }
        if (!wc.isSuccess()) {
            failed("send", wc);
        }
    }

    private void onReceive(CompletionView wc) {
        if (!wc.isSuccess()) {
            failed("receive", wc);
            return;
        }
        int slot = (int) wc.wrId();
        int imm = wc.hasImmediate() ? wc.immediateData() : 0;
        sendCredits += imm & DATA_GRANTS;
        controlCredits += (imm & CONTROL_GRANTS) >>> CONTROL_GRANTS_SHIFT;
        boolean data = (imm & CONTROL) == 0;
        if (data) {
            peerCredits--;
        }
        if ((imm & CLOSE) != 0) {
            peerClosed = true;
        }
        if ((imm & END_OF_STREAM) != 0) {
            peerEnded = true;
        }
        int len = wc.byteLength();
        if (len > 0 && data && !closing) {
            deliver(slot, len);
        } else {
            repost(slot, data);
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

    /**
     * A data message for the application: fired now when reads are requested and none waits before it; otherwise it
     * waits in its receive buffer (not posted again, so the peer runs out of credits: back-pressure).
     */
    private void deliver(int slot, int len) {
        if (channel.inputShutdownLocally()) {
            repost(slot, true);
            return;
        }
        if (pendingCount == 0 && channel.readRequested()) {
            channel.received(buffer(slot, len));
            return;
        }
        int i = (pendingHead + pendingCount) % recvSlots;
        pendingSlot[i] = slot;
        pendingLen[i] = len;
        pendingCount++;
    }

    /** Lends the receive buffer itself while fewer than half are lent; copies it otherwise (and posts it again). */
    private ByteBuf buffer(int slot, int len) {
        int off = slot * size;
        if (lent.get() < dataReceives / 2) {
            lent.incrementAndGet();
            return new ReceivedBuf(channel.alloc(), this, slot, recvWhole.slice(off, len));
        }
        ByteBuf buf = channel.alloc().directBuffer(len, len);
        recvCopy.clear().position(off).limit(off + len);
        buf.writeBytes(recvCopy);
        repost(slot, true);
        return buf;
    }

    boolean hasQueuedReads() {
        return pendingCount > 0;
    }

    /** Fires the waiting messages while the channel wants them. */
    void deliverQueued() {
        while (pendingCount > 0 && channel.readRequested()) {
            int i = pendingHead;
            pendingHead = (pendingHead + 1) % recvSlots;
            pendingCount--;
            channel.received(buffer(pendingSlot[i], pendingLen[i]));
        }
    }

    /** shutdownInput: the waiting messages are dropped, their buffers posted again. */
    void dropQueuedReads() {
        while (pendingCount > 0) {
            int i = pendingHead;
            pendingHead = (pendingHead + 1) % recvSlots;
            pendingCount--;
            repost(pendingSlot[i], true);
        }
    }

    /**
     * The peer's end of stream or close, once everything before it was delivered (after the pass's
     * {@code channelReadComplete}): reported to the channel once.
     */
    void reportEndOfInput() {
        if (peerEnded && !peerEndReported && pendingCount == 0 && !closing) {
            peerEndReported = true;
            if (peerClosed) {
                channel.close(); // the peer is gone entirely: nothing it is sent will be read
            } else {
                channel.peerShutdownOutput();
            }
        }
    }

    /** Posts receive buffer {@code slot} again: a credit owed to the peer, of data or control. */
    private void repost(int slot, boolean data) {
        if (closing) {
            return;
        }
        repost.clear().receive(slot, recvRegion, (long) slot * size, size);
        int rc = qp.tryPost(repost);
        if (rc != 0) {
            channel.broken(VerbsException.of("ibv_post_recv", rc, channel.toString()));
            return;
        }
        if (data) {
            dataGrantsOwed++;
        } else {
            controlGrantsOwed++;
        }
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
        repost(slot, true);
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
     * Stops sending and receiving; tells the peer it closes, and after the messages already posted were acknowledged
     * (at most {@code lingerMillis}) disconnects and frees everything but receive buffers the application still holds.
     */
    void close(long lingerMillis) {
        if (closing) {
            return;
        }
        if (lingerMillis > 0 && connection != null && !peerClosed) {
            sendMark(CLOSE | END_OF_STREAM); // a close, not a reset (when a credit allows; else the peer sees a reset)
        }
        closing = true;
        pendingCount = 0; // their buffers are freed with the region
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

    /** Disconnects and frees the pipe now (a linger still running is cut short: the loop shuts down). */
    void teardown() {
        if (tornDown) {
            return;
        }
        tornDown = true;
        closing = true;
        handler.pipeClosed(this);
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

    QueuePair queuePair() {
        return qp;
    }

    /** The counters, for diagnostics: credits, messages in flight, waits. */
    String state() {
        return "credits " + sendCredits + "+" + controlCredits + " owed " + dataGrantsOwed + "+" + controlGrantsOwed
                + " peer " + peerCredits + ", in flight " + sqOutstanding + (writeBlocked ? ", writes wait" : "")
                + (closing ? ", closing" : "");
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
