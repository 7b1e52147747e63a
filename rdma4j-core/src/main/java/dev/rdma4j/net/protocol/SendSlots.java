package dev.rdma4j.net.protocol;

/**
 * The ring of a connection's send buffers: a buffer is filled ({@link #fill}) in call order, posted
 * ({@link #post}) in that same order when a credit allows, and free again once its send completed ({@link #done}) and
 * every buffer filled before it did too. Filled and not yet posted, a buffer is staged: the message waits there for a
 * credit, in order. Completions may come in any order (a flushed queue reports them so); the ring frees in order.
 *
 * <p>Threading: not thread-safe; owned by one connection or channel, used by one thread at a time (see the package).
 */
public final class SendSlots {
    private final int slots;
    /** Per slot: its send completed (or never will be posted), the ring not yet past it. */
    private final boolean[] completed;
    /** Buffers filled, posted, and reclaimed since the start (head, posted, tail: tail <= posted <= head). */
    private long head;
    private long posted;
    private long tail;

    /**
     * A ring of {@code slots} buffers, all free.
     *
     * @param slots at least 1
     * @throws IllegalArgumentException if {@code slots} is less than 1
     */
    public SendSlots(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("at least one send buffer: " + slots);
        }
        this.slots = slots;
        this.completed = new boolean[slots];
    }

    /**
     * The number of buffers.
     *
     * @return the ring's size
     */
    public int capacity() {
        return slots;
    }

    /**
     * Whether a buffer is free to fill.
     *
     * @return true if {@link #fill} may be called
     */
    public boolean hasFree() {
        return head - tail < slots;
    }

    /**
     * Takes the next free buffer to fill with a message; it is staged until {@link #post}.
     *
     * @return the buffer's index, 0 to {@code capacity() - 1}
     * @throws IllegalStateException if none is free
     */
    public int fill() {
        if (!hasFree()) {
            throw new IllegalStateException("no free send buffer");
        }
        return (int) (head++ % slots);
    }

    /**
     * Gives back the buffer {@link #fill} just returned, not posted (filling it failed).
     *
     * @throws IllegalStateException if no buffer is staged
     */
    public void unfill() {
        if (head == posted) {
            throw new IllegalStateException("no staged send buffer to give back");
        }
        head--;
    }

    /**
     * Whether a filled buffer waits to be posted.
     *
     * @return true if {@link #post} may be called
     */
    public boolean hasStaged() {
        return posted < head;
    }

    /**
     * Buffers filled and not yet posted.
     *
     * @return the count
     */
    public int staged() {
        return (int) (head - posted);
    }

    /**
     * Buffers posted and not yet completed (or reclaimed).
     *
     * @return the count
     */
    public int inFlight() {
        return (int) (posted - tail);
    }

    /**
     * The oldest staged buffer goes to the device.
     *
     * @return its index
     * @throws IllegalStateException if none is staged
     */
    public int post() {
        if (!hasStaged()) {
            throw new IllegalStateException("no staged send buffer");
        }
        return (int) (posted++ % slots);
    }

    /**
     * The send in buffer {@code slot} completed (successfully or not), or its post failed: the buffer is free once
     * every buffer posted before it is.
     *
     * @param slot a posted buffer's index
     * @throws IllegalArgumentException if {@code slot} is not posted and in flight
     */
    public void done(int slot) {
        long age = Math.floorMod(slot - tail, (long) slots);
        if (slot < 0 || slot >= slots || age >= posted - tail || completed[slot]) {
            throw new IllegalArgumentException("send buffer " + slot + " is not in flight (" + this + ")");
        }
        completed[slot] = true;
        while (tail < posted && completed[(int) (tail % slots)]) {
            completed[(int) (tail % slots)] = false;
            tail++;
        }
    }

    /**
     * Whether nothing is staged or in flight.
     *
     * @return true when every buffer is free
     */
    public boolean isIdle() {
        return head == tail;
    }

    /**
     * The counters, for diagnostics.
     *
     * @return e.g. {@code "send buffers 16: 2 staged, 3 in flight"}
     */
    @Override
    public String toString() {
        return "send buffers " + slots + ": " + staged() + " staged, " + inFlight() + " in flight";
    }
}
