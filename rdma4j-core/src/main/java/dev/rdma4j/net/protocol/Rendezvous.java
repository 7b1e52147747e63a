package dev.rdma4j.net.protocol;

import java.util.ArrayDeque;

/**
 * The bookkeeping of the read rendezvous, both ways: a large write is announced (a data message saying where its
 * bytes are) and held until the peer says it read it ({@link Immediate#readsDone}); the peer's announcements are read
 * (RDMA READ) in announcement order, at most {@link #IN_FLIGHT} at a time, and each read done is reported back
 * ({@link Credits#readDone}). Both ways at most {@link #IN_FLIGHT} rendezvous are outstanding, so a side reads ahead
 * into bounded memory. What an entry holds (buffers, registrations) is the caller's: {@code O} for this side's
 * announcements, {@code I} for the peer's.
 *
 * <p>Threading: not thread-safe; owned by one connection or channel, used by one thread at a time (see the package).
 *
 * @param <O> what this side keeps of a rendezvous it announced
 * @param <I> what this side keeps of a rendezvous the peer announced
 */
public final class Rendezvous<O, I> {
    /** Rendezvous a side may have announced and not yet seen read; also the reads a side has in flight. */
    public static final int IN_FLIGHT = 4;

    /** This side's announcements the peer has not yet said it read, oldest first. */
    private final ArrayDeque<O> announced = new ArrayDeque<>(IN_FLIGHT);
    /** The peer's announcements whose reads are posted (they complete in this order). */
    private final ArrayDeque<I> reading = new ArrayDeque<>(IN_FLIGHT);
    /** The peer's announcements whose reads are not yet posted. */
    private final ArrayDeque<I> waiting = new ArrayDeque<>(IN_FLIGHT);

    /** An empty book. */
    public Rendezvous() {
    }

    /**
     * Whether this side may announce another rendezvous: fewer than {@link #IN_FLIGHT} are unread.
     *
     * @return true if {@link #announced} may be called
     */
    public boolean canAnnounce() {
        return announced.size() < IN_FLIGHT;
    }

    /**
     * This side announced {@code o} (its announcement is in a data message just sent).
     *
     * @param o what to keep until the peer read it
     * @throws IllegalStateException if {@link #canAnnounce} is false
     */
    public void announced(O o) {
        if (!canAnnounce()) {
            throw new IllegalStateException(IN_FLIGHT + " rendezvous are unread already");
        }
        announced.add(o);
    }

    /**
     * The peer read this side's oldest announced rendezvous (one of {@link Immediate#readsDone}).
     *
     * @return what was kept of it, to release; null if none was announced (a peer's error)
     */
    public O readByPeer() {
        return announced.poll();
    }

    /**
     * This side's rendezvous the peer has not yet read.
     *
     * @return the count
     */
    public int unread() {
        return announced.size();
    }

    /**
     * The peer announced {@code i}: read after those announced before it.
     *
     * @param i what to keep of it
     */
    public void peerAnnounced(I i) {
        waiting.add(i);
    }

    /**
     * The next of the peer's rendezvous to read, if fewer than {@link #IN_FLIGHT} reads are in flight: from now on it
     * counts as read in flight (its read completes in order: {@link #readCompleted}).
     *
     * @return its entry, or null if none waits or enough reads are in flight
     */
    public I startRead() {
        if (reading.size() >= IN_FLIGHT) {
            return null;
        }
        I i = waiting.poll();
        if (i != null) {
            reading.add(i);
        }
        return i;
    }

    /**
     * Whether a peer's rendezvous waits for its read to be posted.
     *
     * @return true if one waits
     */
    public boolean hasWaiting() {
        return !waiting.isEmpty();
    }

    /**
     * The oldest read in flight completed.
     *
     * @return its entry, or null if none was in flight
     */
    public I readCompleted() {
        return reading.poll();
    }

    /**
     * The peer's rendezvous not yet read (in flight or waiting).
     *
     * @return the count
     */
    public int toRead() {
        return reading.size() + waiting.size();
    }

    /**
     * For a teardown: the next entry of the peer's not yet read (reads in flight first), taken out.
     *
     * @return it, or null when none is left
     */
    public I takeUnread() {
        I i = reading.poll();
        return i != null ? i : waiting.poll();
    }
}
