package dev.rdma4j.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An {@link RdmaPipe}'s counts of messages and bytes by path (copied, zero-copy, rendezvous, read), which
 * {@link RdmaChannel#counters()} snapshots as {@link RdmaChannelCounters}.
 *
 * <p>Threading: written by the event loop only; read by any thread. Every access is opaque
 * ({@link VarHandle#getOpaque}/{@link VarHandle#setOpaque}): compiled as plain loads and stores (no fence, no locked
 * instruction: an increment costs what a plain field's does), yet a reader on another thread never sees a torn value
 * and sees each new value eventually.
 */
final class PathCounters {
    private static final VarHandle AT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int COPIED = 0;
    private static final int ZERO_COPY = 2;
    private static final int RENDEZVOUS = 4;
    private static final int READ = 6;
    private static final int STALLS = 8;

    /** Pairs of (messages, bytes) per path, then the credit stalls. */
    private final long[] counts = new long[9];

    /** A message carried {@code bytes} copied into a send buffer. */
    void copied(int bytes) {
        add(COPIED, bytes);
    }

    /** A message carried {@code bytes} from the application's registered memory. */
    void zeroCopy(int bytes) {
        add(ZERO_COPY, bytes);
    }

    /** A rendezvous of {@code bytes} was announced. */
    void rendezvous(int bytes) {
        add(RENDEZVOUS, bytes);
    }

    /** A read of the peer's rendezvous of {@code bytes} was posted. */
    void read(int bytes) {
        add(READ, bytes);
    }

    /** Writes began to wait for the peer's credits. */
    void creditStall() {
        AT.setOpaque(counts, STALLS, (long) AT.getOpaque(counts, STALLS) + 1);
    }

    private void add(int path, int bytes) {
        AT.setOpaque(counts, path, (long) AT.getOpaque(counts, path) + 1);
        AT.setOpaque(counts, path + 1, (long) AT.getOpaque(counts, path + 1) + bytes);
    }

    private long get(int i) {
        return (long) AT.getOpaque(counts, i);
    }

    RdmaChannelCounters snapshot(int receiveBuffersLent) {
        return new RdmaChannelCounters(get(0), get(1), get(2), get(3), get(4), get(5), get(6), get(7), get(STALLS),
                receiveBuffersLent);
    }
}
