package dev.rdma4j;

import dev.rdma4j.internal.ffi.CEnums;
import dev.rdma4j.internal.ffi.WcView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A reusable batch of work completions: native {@code struct ibv_wc} entries that
 * {@link CompletionQueue#poll(WorkCompletions)} fills and that the accessors read in place, so
 * polling allocates nothing. Not thread-safe: one poller owns one batch.
 *
 * <p>The direction of each completion ({@link #isReceive(int)}) comes from rdma4j's own book-keeping (the
 * native wr_id of every request records whether it was posted as a receive), not from the C
 * {@code ibv_wc.opcode}, which is undefined when {@code status} is not {@code IBV_WC_SUCCESS} (rxe reports
 * {@code IBV_WC_SEND} for a flushed receive).
 *
 * <p>The accessors take an index below {@link #count()} ({@link IndexOutOfBoundsException} otherwise). After
 * {@link #close()} they, and {@link CompletionQueue#poll} into the batch, throw {@link IllegalStateException}
 * ("WorkCompletions(n) is closed").
 */
public final class WorkCompletions implements AutoCloseable {
    /** {@code IBV_WC_GRH}: a UD receive whose first 40 bytes hold a GRH. */
    public static final int FLAG_GRH = CEnums.IBV_WC_GRH;
    /** {@code IBV_WC_WITH_IMM}: immediate data is present. */
    public static final int FLAG_WITH_IMM = CEnums.IBV_WC_WITH_IMM;
    /** {@code IBV_WC_WITH_INV}: the peer's send invalidated a key of this side ({@link #invalidatedRkey}). */
    public static final int FLAG_WITH_INV = CEnums.IBV_WC_WITH_INV;

    private final Arena arena = Arena.ofShared();
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private final int capacity;
    private final MemorySegment wcs;
    private int count;
    /** Whether the last poll found fewer entries than {@link #capacity} (written by each poll). */
    private boolean emptied;
    private final MemoryRegion[] regions;
    private final long[] offsets;
    private final dev.rdma4j.internal.QpDriver[] drivers;
    private final boolean[] receives;
    /** Completion timestamps, written by the poll of an extended CQ created with them. */
    private final long[] timestamps;
    /** Whether the last poll's entries carry timestamps (written by each poll). */
    boolean timestamped;
    /** {@link #get}'s copy of one entry (the batch has one owner). */
    private final long[] words = new long[WcView.WORDS];

    /**
     * Allocates room for {@code capacity} completions.
     *
     * @param capacity the most completions one poll returns, at least 1
     */
    public WorkCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        this.capacity = capacity;
        this.wcs = arena.allocate(WcView.SIZE * capacity, 8);
        this.regions = new MemoryRegion[capacity];
        this.offsets = new long[capacity];
        this.drivers = new dev.rdma4j.internal.QpDriver[capacity];
        this.receives = new boolean[capacity];
        this.timestamps = new long[capacity];
    }

    long[] timestamps() {
        return timestamps;
    }

    /**
     * The completion timestamp of completion {@code i} ({@code ibv_wc_read_completion_ts}: the device's clock, which
     * {@code ExtendedDeviceAttributes.hcaCoreClockKhz()} converts), for a batch polled from a CQ created with
     * timestamps ({@code Context.createExtendedCompletionQueue(..., true)}).
     *
     * @param i index below {@link #count()}
     * @return the timestamp (0 for a failed completion)
     * @throws IllegalStateException if the last poll was of a queue without timestamps
     */
    public long completionTimestamp(int i) {
        check(i);
        if (!timestamped) {
            throw new IllegalStateException("these completions carry no timestamp: the queue was not created with"
                    + " them (Context.createExtendedCompletionQueue(size, channel, vector, true))");
        }
        return timestamps[i];
    }

    /** Completion {@code i} is of a request posted as a receive (the receive bit of rdma4j's wr_id). */
    void receive(int i, boolean receive) {
        receives[i] = receive;
    }

    void driver(int i, dev.rdma4j.internal.QpDriver driver) {
        drivers[i] = driver;
    }

    /** Who drives the queue pair of completion {@code i} (the engine routes by it), or null. */
    dev.rdma4j.internal.QpDriver driver(int i) {
        return drivers[check(i)];
    }

    void buffer(int i, MemoryRegion region, long offset) {
        regions[i] = region;
        offsets[i] = offset;
    }

    void moveBuffer(int from, int to) {
        regions[to] = regions[from];
        offsets[to] = offsets[from];
        timestamps[to] = timestamps[from];
    }

    /**
     * For a receive completion: the region its (first) buffer was in, as posted. Shared receive queues
     * hand back this way which of the posted buffers a message landed in.
     *
     * @param i index below {@link #count()}
     * @return the region, or null for sends
     */
    public MemoryRegion region(int i) {
        return regions[check(i)];
    }

    /**
     * For a receive completion: the offset of its buffer in {@link #region(int)}.
     *
     * @param i index below {@link #count()}
     * @return the offset as posted
     */
    public long bufferOffset(int i) {
        return offsets[check(i)];
    }

    /**
     * For a successful receive: the received bytes, a view of {@code byteLength} bytes of the posted buffer
     * (allocates the view). With several scatter entries, only the first entry's part is covered.
     *
     * @param i index below {@link #count()}
     * @return the bytes, or null for sends
     */
    public MemorySegment buffer(int i) {
        check(i);
        return buffer(i, WcView.byteLen(wcs, i));
    }

    private MemorySegment buffer(int i, int byteLen) {
        MemoryRegion r = regions[i];
        if (r == null) {
            return null;
        }
        long len = Math.min(Integer.toUnsignedLong(byteLen), r.length() - offsets[i]);
        return r.segment().asSlice(offsets[i], len);
    }

    /**
     * How many completions one poll may return.
     *
     * @return the capacity
     */
    public int capacity() {
        return capacity;
    }

    /**
     * How many completions the last poll returned.
     *
     * @return the count
     */
    public int count() {
        return count;
    }

    /**
     * Whether the last poll left its queue empty: {@code ibv_poll_cq} found fewer entries than this batch holds (those
     * of destroyed queue pairs, which the poll drops, count too), so the CQ had no more at that moment. A loop that
     * drains a queue can stop here instead of polling once more for nothing: after arming the queue
     * ({@link CompletionQueue#requestNotification(boolean)}), a poll that empties it closes the lost-wake-up window as
     * well as an empty poll would (unless handling the batch posted requests: their completions may be there already,
     * and a poll more is cheaper than the event they would raise). False after a full batch (more may be waiting, even
     * when {@link #count()} is 0 because every entry was dropped) and after a failed or refused poll.
     *
     * @return true when the queue was emptied by the last poll
     */
    public boolean emptied() {
        return emptied;
    }

    /** The native entries, for a poll; refused once closed (the poll would fail on them anyway, with the JDK's text). */
    MemorySegment segment() {
        if (closed.get()) {
            throw closedError();
        }
        return wcs;
    }

    private IllegalStateException closedError() {
        return new IllegalStateException(this + " is closed");
    }

    @Override
    public String toString() {
        return "WorkCompletions(" + capacity + ")";
    }

    /** The engine's: completion {@code i} reports no wr_id (the caller gave none; rdma4j's token stays inside). */
    void clearWrId(int i) {
        WcView.wrId(wcs, check(i), 0L);
    }

    void count(int n) {
        count = n;
    }

    /** Records whether the last poll emptied its queue (see {@link #emptied()}). */
    void emptied(boolean e) {
        emptied = e;
    }

    /**
     * Index {@code i}, checked. A closed batch has no completions ({@code close()} sets the count to 0), so the check
     * costs nothing more on the hot path; its failure says "closed" when that is why.
     */
    private int check(int i) {
        if (i < 0 || i >= count) {
            if (closed.get()) {
                throw closedError();
            }
            Objects.checkIndex(i, count);
        }
        return i;
    }

    /**
     * The caller's wr_id of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return the wr_id given when posting
     */
    public long wrId(int i) {
        return WcView.wrId(wcs, check(i));
    }

    /**
     * The status of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return the status
     */
    public WcStatus status(int i) {
        return WcStatus.of(WcView.status(wcs, check(i)));
    }

    /**
     * Whether completion {@code i} succeeded.
     *
     * @param i index below {@link #count()}
     * @return {@code true} on {@code IBV_WC_SUCCESS}
     */
    public boolean isSuccess(int i) {
        return WcView.status(wcs, check(i)) == 0;
    }

    /**
     * Whether completion {@code i} completes a receive (posted to a queue pair's receive queue or to a shared
     * receive queue), failed ones included. Known from rdma4j's own wr_id, not from the C opcode, which is
     * undefined for a failed completion.
     *
     * @param i index below {@link #count()}
     * @return {@code true} for receives, {@code false} for send-queue requests
     */
    public boolean isReceive(int i) {
        return receives[check(i)];
    }

    /**
     * The opcode of completion {@code i} ({@code ibv_wc.opcode}). In C it is defined for successful
     * completions only; for a failed one rdma4j reports {@link WcOpcode#RECV} for a receive (unless the
     * provider gave a receive opcode) and, for a send-queue request, the provider's value if it is not a
     * receive opcode, else {@link WcOpcode#UNKNOWN}; so {@code opcode(i).isReceive() == isReceive(i)} always
     * holds. Do not rely on the exact opcode of a failed send.
     *
     * @param i index below {@link #count()}
     * @return the opcode
     */
    public WcOpcode opcode(int i) {
        check(i);
        return opcodeOf(WcOpcode.of(WcView.opcode(wcs, i)), receives[i]);
    }

    /** The C opcode, replaced when it contradicts the direction rdma4j knows (an undefined value of a failure). */
    static WcOpcode opcodeOf(WcOpcode c, boolean receive) {
        if (c.isReceive() == receive) {
            return c;
        }
        return receive ? WcOpcode.RECV : WcOpcode.UNKNOWN;
    }

    /**
     * {@code byte_len} of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return bytes
     */
    public int byteLength(int i) {
        return WcView.byteLen(wcs, check(i));
    }

    /**
     * The immediate data of completion {@code i}, in host order.
     *
     * @param i index below {@link #count()}
     * @return the value sent with the request ({@link #hasImmediate(int)} tells whether there was one)
     */
    public int immediateData(int i) {
        return WcView.immData(wcs, check(i));
    }

    /**
     * Whether completion {@code i} carries immediate data.
     *
     * @param i index below {@link #count()}
     * @return {@code IBV_WC_WITH_IMM} is set
     */
    public boolean hasImmediate(int i) {
        return (WcView.wcFlags(wcs, check(i)) & FLAG_WITH_IMM) != 0;
    }

    /**
     * The key the peer's send with invalidate ({@code IBV_WR_SEND_WITH_INV}) invalidated ({@code invalidated_rkey},
     * host order), for a receive completion with {@link #FLAG_WITH_INV}.
     *
     * @param i index below {@link #count()}
     * @return the rkey, or 0 when the completion has no {@code IBV_WC_WITH_INV}
     */
    public int invalidatedRkey(int i) {
        return (WcView.wcFlags(wcs, check(i)) & FLAG_WITH_INV) != 0
                ? Integer.reverseBytes(WcView.immData(wcs, i)) : 0;
    }

    /**
     * The local QP number of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return {@code qp_num}
     */
    public int qpNumber(int i) {
        return WcView.qpNum(wcs, check(i));
    }

    /**
     * The remote QP number of a UD receive.
     *
     * @param i index below {@link #count()}
     * @return {@code src_qp}
     */
    public int sourceQp(int i) {
        return WcView.srcQp(wcs, check(i));
    }

    /**
     * The {@code wc_flags} of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return flags such as {@link #FLAG_GRH}
     */
    public int flags(int i) {
        return WcView.wcFlags(wcs, check(i));
    }

    /**
     * The sender's LID of a UD receive.
     *
     * @param i index below {@link #count()}
     * @return {@code slid}
     */
    public int slid(int i) {
        return WcView.slid(wcs, check(i));
    }

    /**
     * The P_Key index of completion {@code i}.
     *
     * @param i index below {@link #count()}
     * @return {@code pkey_index}
     */
    public int pkeyIndex(int i) {
        return WcView.pkeyIndex(wcs, check(i));
    }

    /**
     * An immutable copy of completion {@code i} (allocates; for logs and tests).
     *
     * @param i index below {@link #count()}
     * @return the copy
     */
    public WorkCompletion get(int i) {
        check(i);
        long[] w = words;
        WcView.copy(wcs, i, w); // one copy of the entry, its fields decoded from it
        int status = WcView.status(w);
        int flags = WcView.wcFlags(w);
        int byteLen = WcView.byteLen(w);
        return new WorkCompletion(WcView.wrId(w), WcStatus.of(status),
                opcodeOf(WcOpcode.of(WcView.opcode(w)), receives[i]), byteLen, WcView.immData(w),
                (flags & FLAG_WITH_IMM) != 0, WcView.qpNum(w), WcView.srcQp(w), flags, WcView.pkeyIndex(w),
                WcView.slid(w), WcView.sl(w), WcView.vendorErr(w), status == 0 ? buffer(i, byteLen) : null,
                receives[i]);
    }

    /**
     * Frees the native entries. Idempotent, and safe when threads close it at once. Afterwards polling into it and
     * reading it throw {@link IllegalStateException} ("WorkCompletions(n) is closed").
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            count = 0;
            arena.close();
        }
    }
}
