package dev.rdma4j.netty;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WcStatus;
import dev.rdma4j.connect.CmConnection;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.CompletionView;
import dev.rdma4j.net.protocol.Credits;
import dev.rdma4j.net.protocol.Immediate;
import dev.rdma4j.net.protocol.Rendezvous;
import dev.rdma4j.net.protocol.SendSlots;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The verbs side of one {@link RdmaChannel}: its completion queue, queue pair and registered buffers (in the event
 * loop's shared {@link RegisteredMemory}) and the data path, on the wire protocol it shares with the core's
 * {@code net.RdmaConnection} ({@code dev.rdma4j.net.protocol}: {@link Credits}, {@link Immediate}, {@link SendSlots},
 * {@link Rendezvous}). Every method runs on the channel's event loop (the engine's thread), except
 * {@link ReceivedBuf#deallocate()}, which hops there.
 *
 * <p>Wire format, per RDMA SEND WITH IMMEDIATE: the payload is a piece of the byte stream (possibly empty); the
 * immediate ({@link Immediate}) carries data and control credits, the peer's rendezvous read, and the marks
 * (rendezvous, control, close: the sender's disconnect is then no reset, end of stream: {@code shutdownOutput}). Each
 * side posts {@code receiveBuffers} receives for data and {@link Credits#CONTROL_RECEIVES} more for messages that only
 * carry credits or marks; the connection's private data carry each side's data receive count and message size.
 *
 * <p>Large writes (a direct buffer of {@link RdmaChannelOption#RENDEZVOUS_THRESHOLD} readable bytes or more that
 * only the outbound buffer holds) go by a read rendezvous instead of a series of SENDs: the sender registers exactly
 * those bytes ({@code ibv_reg_mr}, remote read only: the peer sees nothing else of its memory), announces address,
 * rkey and length (16 bytes) in a data message, and holds the buffer. The receiver RDMA READs them into a buffer of
 * its loop's {@link RdmaByteBufAllocator} (registered already; a piece is at most its largest block), several reads
 * in flight (the connection's read depth), in announcement order and whether or not the application reads (so a
 * closing sender's data is fetched before it goes), and counts the reads in its next immediate; the sender then
 * deregisters and releases. The announcement keeps its receive buffer, and later messages wait behind it, until the
 * data is delivered: the stream's order holds and back-pressure works as for SENDs. At most
 * {@link Rendezvous#IN_FLIGHT} rendezvous are unread per side, so the peer reads ahead into bounded memory.
 */
final class RdmaPipe {
    /** wr_id of a message without a send buffer (credits, marks). */
    private static final long MARK = -1;
    /** wr_id of a message sent from the application's registered buffer (held until it completes). */
    private static final long ZERO_COPY = -2;
    /** wr_id of such a message whose write completes only with its send (the buffer has other holders). */
    private static final long WAITING = -4;
    /** Readable bytes from which a write in registered memory is sent from it rather than copied. */
    static final int ZERO_COPY_MIN = RdmaByteBufAllocator.MIN_BLOCK;
    /** wr_id of the RDMA READ that fetches a rendezvous' data. */
    private static final long READ = -3;
    /**
     * Default readable bytes from which a direct write goes by rendezvous. Measured on rxe in one guest (1 MiB
     * writes of pooled direct memory, interleaved with and without): parity or a little faster than copying into
     * SENDs from 1 MiB, ~10% slower at 256 KiB (the registration per write costs more than the copy saves there).
     */
    static final int RENDEZVOUS_DEFAULT = 1 << 20;
    /** The most bytes one rendezvous moves (a larger write is several). */
    static final int RENDEZVOUS_MAX = RdmaByteBufAllocator.MAX_BLOCK;
    /** Rendezvous a side may have announced and not yet seen read: bounds the memory the peer reads ahead into. */
    static final int RENDEZVOUS_IN_FLIGHT = Rendezvous.IN_FLIGHT;
    /** A rendezvous announcement's payload: address, rkey, length. */
    private static final int RENDEZVOUS_BYTES = 16;
    /** Send queue room beyond the send buffers, for zero-copy, mark and read requests. */
    private static final int EXTRA_SENDS = 16;

    /** A connection's sizes, read once from the channel's options: what is posted is what is announced. */
    record Sizes(int receiveBuffers, int sendBuffers, int messageSize, int inlineThreshold, int rendezvousThreshold,
            boolean busyPoll) {
        static Sizes of(RdmaChannelConfig c) {
            return new Sizes(c.getReceiveBuffers(), c.getSendBuffers(), c.getMessageSize(), c.getInlineThreshold(),
                    c.getRendezvousThreshold(), c.isBusyPoll());
        }
    }

    /** What a side tells the other when connecting: its data receive buffers and their size. */
    record Peer(int receiveBuffers, int messageSize) {
        private static final int MAGIC = 0x52344E33; // "R4N3"

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
    private final int rendezvousThreshold;
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
    /** The rendezvous of a waiting message, or null for a message in its receive buffer. */
    private final Inbound[] pendingIn;
    private int pendingHead;
    private int pendingCount;
    /** Receive buffers held by the application (released from any thread). */
    private final AtomicInteger lent = new AtomicInteger();
    /** The buffers zero-copy sends in flight read from, in posting order (send completions come in that order). */
    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();
    /** Where the next bytes to post are in the outbound buffer, and which posted bytes may leave it. */
    private final OutboundCursor cursor;
    /** Messages and bytes by path: copied, zero-copy, rendezvous, read ({@link RdmaChannel#counters()}). */
    final PathCounters counters = new PathCounters();
    /** While writes wait for the peer's credits: the stall's JFR event, or a marker when none is recorded. */
    private Object creditStall;
    /** The rendezvous both ways: this side's announced and unread, the peer's being read or waiting to be. */
    private final Rendezvous<Outbound, Inbound> rendezvous = new Rendezvous<>();
    /** A registration for a rendezvous failed (memlock limit): large writes are copied from then on. */
    private boolean rendezvousRefused;
    /** The outbound buffer's buffer this side holds pieces of (its reference count is 1 + the holds). */
    private ByteBuf sharing;
    private int sharedHolds;

    private Peer peer;
    private int sendSize;
    private QueuePair qp;
    private CmConnection connection;
    /** The send buffers: each filled and posted at once (a message takes one only when it may go). */
    private final SendSlots slots;
    private int sqOutstanding;
    /** The credits both ways. */
    private final Credits credits;
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
        this.recvSlots = dataReceives + Credits.CONTROL_RECEIVES;
        this.slots = new SendSlots(sendSlots);
        this.credits = new Credits(dataReceives);
        this.size = sizes.messageSize();
        this.inlineThreshold = sizes.inlineThreshold();
        this.rendezvousThreshold = sizes.rendezvousThreshold();
        this.sqCapacity = sendSlots + EXTRA_SENDS;
        this.cursor = new OutboundCursor(sqCapacity);
        this.peer = peer;
        this.pendingSlot = new int[recvSlots];
        this.pendingLen = new int[recvSlots];
        this.pendingIn = new Inbound[recvSlots];
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

    QueuePairBuilder queuePairBuilder() {
        QueuePairBuilder b = QueuePair.builder(memory.protectionDomain(), QpType.RC).completionQueue(cq)
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
        credits.peerKnows(dataReceives); // the private data tell the peer
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
        credits.peerGranted(peer.receiveBuffers);
        sendSize = Math.min(size, peer.messageSize);
        return true;
    }

    // ---------------------------------------------------------------- sending

    /** Whether a data message may go now: a data credit, queue room, and a send buffer when it is copied. */
    private boolean canSendData(boolean copied) {
        if (peer == null || closing || sqOutstanding >= sqCapacity || !credits.canSendData()) {
            return false;
        }
        return !copied || slots.hasFree();
    }

    /** The credits owed to the peer, handed over in the immediate of the message being sent, with {@code flags}. */
    private int takeGrants(int flags) {
        return credits.takeGrants(flags);
    }

    /** A data message goes (from a send buffer or the application's memory): spends a data credit. */
    private void sentData() {
        credits.spendData();
        sqOutstanding++;
    }

    /** The next send buffer, filled and posted at once. */
    private int nextSlot() {
        int slot = slots.fill();
        slots.post();
        return slot;
    }

    /**
     * Copies what the outbound buffer holds into free send buffers, packing small writes and cutting large ones
     * into messages of at most the peer's size, and posts them as one list; a large write in registered memory goes
     * from its own memory instead (its write completing with its send when others hold the buffer too:
     * {@link OutboundCursor}). Stops when credits or buffers run out: the rest waits in the outbound buffer until a
     * completion brings them back.
     */
    void write(ChannelOutboundBuffer in) throws IOException {
        cursor.begin(in);
        int n = 0;
        for (;;) {
            ByteBuf first = cursor.current();
            if (first == null) {
                break;
            }
            int off = cursor.offset();
            if (rendezvous(first, off)) {
                if (!canSendData(true) || !rendezvous.canAnnounce()) {
                    break; // a credit, a send buffer or a read by the peer brings it on
                }
                if (announce(first, off)) {
                    if (++n == batch.capacity()) {
                        post(batch);
                        n = 0;
                    }
                    continue;
                } // else not registered: copied below
            }
            RegisteredMemory.Located at = zeroCopy(first, off);
            if (!canSendData(at == null)) {
                break;
            }
            if (at != null) { // straight from the application's registered memory: held until the send completes
                int len = Math.min(first.readableBytes() - off, sendSize);
                boolean waits = !owned(first); // others hold it: its write completes with the send
                batch.sendWithImmediate(waits ? WAITING : ZERO_COPY, at.region(), at.offset(), len, takeGrants(0));
                held.add(hold(first));
                cursor.take(len, waits);
                cursor.posted(waits);
                counters.zeroCopy(len);
                sentData();
                if (++n == batch.capacity()) {
                    post(batch);
                    n = 0;
                }
                continue;
            }
            int slot = nextSlot();
            ByteBuffer v = sendViews[slot];
            v.clear().limit(sendSize);
            ByteBuf b;
            while (v.hasRemaining() && (b = cursor.current()) != null) {
                int bOff = cursor.offset();
                int take = Math.min(b.readableBytes() - bOff, v.remaining());
                if (v.position() > 0 && (zeroCopy(b, bOff) != null || rendezvous(b, bOff))) {
                    break; // it goes on its own, without a copy
                }
                int limit = v.limit();
                v.limit(v.position() + take);
                b.getBytes(b.readerIndex() + bOff, v);
                v.limit(limit);
                cursor.take(take, false);
            }
            cursor.posted(false);
            int len = v.position();
            counters.copied(len);
            batch.sendWithImmediate(slot, sendRegion, (long) slot * size, len, takeGrants(0));
            if (len <= inlineThreshold) {
                batch.inline();
            }
            sentData();
            if (++n == batch.capacity()) {
                post(batch);
                n = 0;
            }
        }
        writeBlocked = cursor.hasUnposted();
        if ((writeBlocked && !credits.canSendData()) != (creditStall != null)) {
            creditStallChanged();
        }
        cursor.end();
        if (n > 0) {
            post(batch);
        }
        if (endPending && !writeBlocked) {
            trySendEnd();
        }
    }

    /** Writes began, or ceased, to wait for the peer's credits: counted, and a JFR event when one is recorded. */
    private void creditStallChanged() {
        if (creditStall == null) {
            counters.creditStall();
            creditStall = NettyFlight.stallStarted();
        } else {
            NettyFlight.stallEnded(creditStall, channel);
            creditStall = null;
        }
    }

    /**
     * Where {@code b}'s next message (from {@code off} bytes past its reader index) lies in registered memory of this
     * loop, if it is large enough to be sent from there.
     */
    private RegisteredMemory.Located zeroCopy(ByteBuf b, int off) {
        int readable = b.readableBytes() - off;
        return readable >= ZERO_COPY_MIN ? memory.locate(b, b.readerIndex() + off, Math.min(readable, sendSize)) : null;
    }

    /** Whether {@code b}'s next bytes go by rendezvous: large, direct, in one piece, held by nobody else. */
    private boolean rendezvous(ByteBuf b, int off) {
        return !rendezvousRefused && b.readableBytes() - off >= rendezvousThreshold && b.isDirect()
                && b.nioBufferCount() == 1 && owned(b);
    }

    /**
     * Whether only the outbound buffer (and this pipe's holds of earlier pieces) holds {@code b}: then nobody can
     * change its bytes while the device reads them, even once its write completed.
     */
    private boolean owned(ByteBuf b) {
        return b.refCnt() == 1 + (b == sharing ? sharedHolds : 0);
    }

    /** Retains {@code b} while the device reads a piece of it. */
    private ByteBuf hold(ByteBuf b) {
        if (b != sharing) {
            sharing = b;
            sharedHolds = 0;
        }
        sharedHolds++;
        return b.retain();
    }

    private void unhold(ByteBuf b) {
        if (b == sharing) {
            sharedHolds--;
        }
        b.release();
    }

    /**
     * Registers the next piece of {@code b} for the peer to read and adds its announcement to the batch.
     *
     * @return false when the registration failed (large writes are copied from then on)
     */
    private boolean announce(ByteBuf b, int off) throws IOException {
        int len = Math.min(b.readableBytes() - off, RENDEZVOUS_MAX);
        MemoryRegion r;
        try { // the buffer is held until the region is closed: its memory outlives the registration
            r = memory.protectionDomain().registerUnsafe(
                    MemorySegment.ofBuffer(b.nioBuffer(b.readerIndex() + off, len)), AccessFlag.REMOTE_READ);
        } catch (VerbsException | RuntimeException e) {
            rendezvousRefused = true;
            System.getLogger("dev.rdma4j.netty").log(System.Logger.Level.WARNING, channel + ": registering a large"
                    + " write for the peer to read failed; large writes are copied from now on", e);
            return false;
        }
        int slot = nextSlot();
        sendViews[slot].clear().putLong(r.address()).putInt(r.rkey()).putInt(len);
        batch.sendWithImmediate(slot, sendRegion, (long) slot * size, RENDEZVOUS_BYTES,
                takeGrants(Immediate.RENDEZVOUS));
        if (RENDEZVOUS_BYTES <= inlineThreshold) {
            batch.inline();
        }
        rendezvous.announced(new Outbound(hold(b), r, NettyFlight.started()));
        cursor.take(len, false); // only the outbound buffer holds it: nobody changes it
        cursor.posted(false);
        counters.rendezvous(len);
        sentData();
        return true;
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
     * credit; marks and reads to report may spend a data credit instead when no control credit may be spent
     * ({@link Credits#spendMark}).
     *
     * @return whether it was posted
     */
    private boolean sendMark(int flags) {
        if (peer == null || closing || sqOutstanding >= sqCapacity) {
            return false;
        }
        int spend = (flags & Immediate.CLOSE) != 0 ? credits.spendLastMark()
                : credits.spendMark(flags != 0 || credits.readsDoneOwed() > 0);
        if (spend < 0) {
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
        if (!endSent && sendMark(Immediate.END_OF_STREAM)) {
            endPending = false;
            endSent = true;
        }
    }

    /** Whether writes wait for credits or buffers that are now back, or sent bytes may leave the outbound buffer. */
    boolean wantsFlush() {
        return (writeBlocked && canSendData(false)) || cursor.hasRemovable();
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
        if (credits.creditMessageDue()) { // reads to report (the peer holds that memory until it hears), or credits
            sendMark(0);
        }
    }

    /** Whether something is due in the after-I/O pass. */
    private boolean afterIoDue() {
        return credits.owesData() || credits.readsDoneOwed() > 0 || writeBlocked || endPending
                || (peerEnded && !peerEndReported) || cursor.hasRemovable();
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
            slots.done((int) id);
        } else if (id == ZERO_COPY || id == WAITING) {
            ByteBuf b = held.poll();
            if (b != null) {
                unhold(b);
            }
            if (id == WAITING) {
                cursor.sent(); // its bytes may leave the outbound buffer: their writes complete
            }
        } else if (id == READ) {
            readDone(wc.isSuccess());
        }
        if (closing) { // lingering: tear down once the last send is done, whatever its outcome
            if (lingerDone()) {
                teardown();
            }
            return;
        }
        if (!wc.isSuccess()) {
            failed(id == READ ? "read" : "send", wc);
        } else if (rendezvous.hasWaiting()) {
            startRead(); // it waited for send queue room
        }
    }

    /** Whether a closing side has nothing left for the peer: every send done, every rendezvous read. */
    private boolean lingerDone() {
        return sqOutstanding == 0 && rendezvous.unread() == 0;
    }

    private void onReceive(CompletionView wc) {
        if (!wc.isSuccess()) {
            failed("receive", wc);
            return;
        }
        int slot = (int) wc.wrId();
        int imm = wc.hasImmediate() ? wc.immediateData() : 0;
        credits.received(imm);
        for (int read = Immediate.readsDone(imm); read > 0; read--) {
            Outbound o = rendezvous.readByPeer();
            if (o != null) { // the peer has the bytes: deregister, release
                NettyFlight.ended(o.recorded(), channel, o.region().length(), true, true);
                closeQuietly(o.region());
                unhold(o.buf());
            }
        }
        boolean data = Immediate.isData(imm);
        if (Immediate.isClose(imm)) {
            peerClosed = true;
        }
        if (Immediate.isEndOfStream(imm)) {
            peerEnded = true;
        }
        int len = wc.byteLength();
        if (closing) {
            if (lingerDone()) {
                teardown();
            }
        } else if (Immediate.isRendezvous(imm) && data) {
            announcedByPeer(slot, len);
        } else if (len > 0 && data) {
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
     * The peer announced a rendezvous: it waits in the delivery queue (keeping its receive buffer: back-pressure)
     * while its bytes are read, in announcement order, whether or not the application reads.
     */
    private void announcedByPeer(int slot, int len) {
        int off = slot * size;
        Inbound r = len == RENDEZVOUS_BYTES
                ? new Inbound(slot, recvWhole.getLong(off), recvWhole.getInt(off + 8), recvWhole.getInt(off + 12))
                : null;
        if (r == null || r.length <= 0 || r.length > RENDEZVOUS_MAX) {
            channel.broken(new IOException("the peer of " + channel + " announced a malformed rendezvous ("
                    + len + " bytes" + (r == null ? "" : ", length " + r.length) + ")"));
            return;
        }
        rendezvous.peerAnnounced(r);
        if (channel.inputShutdownLocally()) {
            r.dropped = true; // read all the same (the peer's count of reads is in order), never delivered
            repost(slot, true);
        } else {
            int i = (pendingHead + pendingCount) % recvSlots;
            pendingSlot[i] = slot;
            pendingLen[i] = r.length;
            pendingIn[i] = r;
            pendingCount++;
        }
        startRead();
    }

    /**
     * Posts the reads of announced rendezvous while fewer than {@link Rendezvous#IN_FLIGHT} are in flight (the
     * connection's read depth) and the send queue has room. (One no longer wanted is read all the same: the peer's
     * count of reads must follow the announcements' order.)
     */
    private void startRead() {
        while (!closing && sqOutstanding < sqCapacity) {
            Inbound r = rendezvous.startRead(); // counted as reading from now on: the teardown finds it
            if (r == null) {
                return;
            }
            ByteBuf dest = memory.allocator().directBuffer(r.length, r.length); // registered: no ibv_reg_mr per read
            try {
                if (dest.nioBufferCount() != 1) { // not one piece of memory: one that is
                    dest.release();
                    dest = io.netty.buffer.Unpooled.directBuffer(r.length, r.length);
                }
                RegisteredMemory.Located at = memory.locate(dest, dest.readerIndex(), r.length);
                MemoryRegion region;
                long offset = 0;
                if (at != null) {
                    region = at.region();
                    offset = at.offset();
                } else { // held by r until the read completes and the region is closed
                    region = r.own = memory.protectionDomain().registerUnsafe(
                            MemorySegment.ofBuffer(dest.nioBuffer(0, r.length)), AccessFlag.LOCAL_WRITE);
                }
                control.read(READ, region, offset, r.length, new RemoteRegion(r.address, r.length, r.rkey), 0);
            } catch (VerbsException | RuntimeException e) {
                dest.release();
                closeQuietly(r.own);
                r.own = null;
                channel.broken(e instanceof IOException io ? io
                        : new IOException("reading the peer's rendezvous on " + channel + " failed", e));
                return;
            }
            r.data = dest;
            r.recorded = NettyFlight.started();
            sqOutstanding++;
            counters.read(r.length);
            try {
                post(control);
            } catch (IOException e) {
                channel.broken(e);
                return;
            }
        }
    }

    /** The head rendezvous' read completed: its bytes are ready for delivery (or dropped, if they are not wanted). */
    private void readDone(boolean ok) {
        Inbound r = rendezvous.readCompleted();
        if (r == null) {
            return;
        }
        NettyFlight.ended(r.recorded, channel, r.length, false, ok);
        closeQuietly(r.own);
        r.own = null;
        if (ok && !closing && !r.dropped) {
            r.data.writerIndex(r.length);
            r.done = true;
        } else {
            r.data.release();
            r.data = null;
        }
        if (ok) {
            credits.readDone();
        }
        if (!closing) {
            channel.afterIoNeeded(); // deliver it, tell the peer
        }
    }

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
        pendingIn[i] = null;
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

    /** Fires the waiting messages while the channel wants them, up to a rendezvous still being read. */
    void deliverQueued() {
        while (pendingCount > 0 && channel.readRequested()) {
            int i = pendingHead;
            Inbound r = pendingIn[i];
            if (r != null && !r.done) {
                return; // its read completing brings the rest
            }
            pendingHead = (pendingHead + 1) % recvSlots;
            pendingCount--;
            if (r == null) {
                channel.received(buffer(pendingSlot[i], pendingLen[i]));
            } else {
                pendingIn[i] = null;
                ByteBuf data = r.data;
                r.data = null;
                repost(r.slot, true);
                channel.received(data);
            }
        }
    }

    /** shutdownInput: the waiting messages are dropped, their buffers posted again. */
    void dropQueuedReads() {
        while (pendingCount > 0) {
            int i = pendingHead;
            pendingHead = (pendingHead + 1) % recvSlots;
            pendingCount--;
            dropRendezvous(i);
            repost(pendingSlot[i], true);
        }
    }

    /** The waiting message {@code i}'s rendezvous, if any, is not delivered: its bytes go, or will once read. */
    private void dropRendezvous(int i) {
        Inbound r = pendingIn[i];
        if (r == null) {
            return;
        }
        pendingIn[i] = null;
        if (r.done) {
            r.data.release();
            r.data = null;
        } else {
            r.dropped = true;
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
        credits.reposted(data);
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
        engine.drainAsync(cq).whenComplete((v, e) -> then.run());
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
            sendMark(Immediate.CLOSE | Immediate.END_OF_STREAM); // a close, not a reset (when a credit allows; else the peer sees a reset)
        }
        if (lingerMillis > 0) {
            cursor.closing(); // what was posted goes during the linger: those writes succeed
        }
        closing = true;
        if (creditStall != null) { // no credit is waited for any more
            creditStallChanged();
        }
        while (pendingCount > 0) { // their receive buffers are freed with the region
            dropRendezvous(pendingHead);
            pendingHead = (pendingHead + 1) % recvSlots;
            pendingCount--;
        }
        if (lingerMillis > 0 && !lingerDone() && connection != null) {
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
            unhold(h);
        }
        Outbound o;
        while ((o = rendezvous.readByPeer()) != null) {
            closeQuietly(o.region());
            unhold(o.buf());
        }
        Inbound r;
        while ((r = rendezvous.takeUnread()) != null) { // their reads ended with the QP
            closeQuietly(r.own);
            if (r.data != null) {
                r.data.release();
            }
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
        return credits + ", in flight " + sqOutstanding
                + (rendezvous.unread() == 0 ? "" : ", announced " + rendezvous.unread())
                + (rendezvous.toRead() == 0 ? "" : ", to read " + rendezvous.toRead()) + (writeBlocked ? ", writes wait" : "")
                + (closing ? ", closing" : "");
    }

    /** For tests: receive buffers the application holds. */
    int lentBuffers() {
        return lent.get();
    }

    /** A rendezvous this side announced: the buffer held and the region the peer reads, until it says it read. */
    private record Outbound(ByteBuf buf, MemoryRegion region, Object recorded) {
    }

    /** A rendezvous the peer announced, from its announcement to its delivery. Loop thread only. */
    private static final class Inbound {
        final int slot;
        final long address;
        final int rkey;
        final int length;
        /** The bytes, from when the read is posted (owned by this until delivered). */
        ByteBuf data;
        /** The destination's own registration, when it was not in registered memory already. */
        MemoryRegion own;
        boolean done;
        /** Not wanted (input shut down): released once read, never delivered. */
        boolean dropped;
        /** The JFR event of its read, if a recording asks for one. */
        Object recorded;

        Inbound(int slot, long address, int rkey, int length) {
            this.slot = slot;
            this.address = address;
            this.rkey = rkey;
            this.length = length;
        }
    }
}
