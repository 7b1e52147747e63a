package dev.rdma4j.netty;

/**
 * A snapshot of what an {@link RdmaChannel} has sent, by the path each message took, and of the peer's large writes
 * it read: {@link RdmaChannel#counters()}. Each write is carried by one or more messages (RDMA SENDs, or a rendezvous
 * announcement the peer answers with an RDMA READ); a message's bytes are counted under the path they took:
 * <ul>
 *   <li><em>copied</em>: copied into one of the channel's registered send buffers, then sent from it;</li>
 *   <li><em>zero-copy</em>: sent straight from the application's registered memory (a buffer of the
 *       {@link RdmaByteBufAllocator}, or a received buffer written back), the device reading it;</li>
 *   <li><em>rendezvous</em>: announced for the peer to RDMA READ from the application's memory (large direct
 *       writes, {@link RdmaChannelOption#RENDEZVOUS_THRESHOLD}).</li>
 * </ul>
 * A message that gathers pieces of several kinds (a copied frame header and a zero-copy payload in one SEND) counts
 * once under every kind it carries, each kind's bytes under its own; the byte counts add up to the bytes sent.
 *
 * <p>Threading: immutable. The counters are plain fields the channel's event loop updates as it posts; a snapshot
 * taken on the loop is exact, one taken on another thread shows values the loop wrote a moment before (each field
 * may lag a little, and the fields need not be from the same instant).
 *
 * @param copiedMessages     messages that carried bytes copied into a send buffer
 * @param copiedBytes        bytes sent from a send buffer (copied there)
 * @param zeroCopyMessages   messages that carried bytes from the application's registered memory
 * @param zeroCopyBytes      bytes sent from the application's registered memory
 * @param rendezvousMessages rendezvous announced (each one piece of at most 1 MiB)
 * @param rendezvousBytes    bytes announced for the peer to read
 * @param readMessages       the peer's rendezvous this side read
 * @param readBytes          bytes this side read from the peer's memory
 * @param creditStalls       times writes began to wait in the outbound buffer for the peer to grant receives (flow
 *                           control: the peer's application reads slower than this side writes)
 * @param receiveBuffersLent receive buffers held now by the application (received {@code ByteBuf}s not released);
 *                           a gauge, not a count: {@link #minus} keeps this snapshot's, {@link #plus} adds them
 */
public record RdmaChannelCounters(long copiedMessages, long copiedBytes, long zeroCopyMessages, long zeroCopyBytes,
        long rendezvousMessages, long rendezvousBytes, long readMessages, long readBytes, long creditStalls,
        int receiveBuffersLent) {
    /** Nothing sent or read (a channel before its connection is set up). */
    public static final RdmaChannelCounters NONE = new RdmaChannelCounters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /**
     * All bytes sent, whatever their path.
     *
     * @return copied, zero-copy and rendezvous bytes together
     */
    public long bytesSent() {
        return copiedBytes + zeroCopyBytes + rendezvousBytes;
    }

    /**
     * The share of the bytes sent that were copied into send buffers: 1.0 when every byte was copied, 0.0 when none
     * was (or nothing was sent).
     *
     * @return copied bytes per byte sent
     */
    public double copiedPerByteSent() {
        long sent = bytesSent();
        return sent == 0 ? 0 : (double) copiedBytes / sent;
    }

    /**
     * What was sent and read between {@code earlier} (a snapshot of the same channel) and this snapshot.
     *
     * @param earlier an earlier snapshot
     * @return the differences, field by field
     */
    public RdmaChannelCounters minus(RdmaChannelCounters earlier) {
        return new RdmaChannelCounters(copiedMessages - earlier.copiedMessages, copiedBytes - earlier.copiedBytes,
                zeroCopyMessages - earlier.zeroCopyMessages, zeroCopyBytes - earlier.zeroCopyBytes,
                rendezvousMessages - earlier.rendezvousMessages, rendezvousBytes - earlier.rendezvousBytes,
                readMessages - earlier.readMessages, readBytes - earlier.readBytes,
                creditStalls - earlier.creditStalls, receiveBuffersLent);
    }

    /**
     * The sums of two snapshots, field by field (e.g. over the channels of a server).
     *
     * @param other another snapshot
     * @return the sums
     */
    public RdmaChannelCounters plus(RdmaChannelCounters other) {
        return new RdmaChannelCounters(copiedMessages + other.copiedMessages, copiedBytes + other.copiedBytes,
                zeroCopyMessages + other.zeroCopyMessages, zeroCopyBytes + other.zeroCopyBytes,
                rendezvousMessages + other.rendezvousMessages, rendezvousBytes + other.rendezvousBytes,
                readMessages + other.readMessages, readBytes + other.readBytes,
                creditStalls + other.creditStalls, receiveBuffersLent + other.receiveBuffersLent);
    }
}
