package dev.rdma4j;

/**
 * What a peer needs to connect to one side of a connection (RC/UC) or to address it (UD): the port's
 * LID (InfiniBand), the QP number, the first packet sequence number it will send, and the GID (RoCE).
 * This is what the C pingpong examples exchange over TCP.
 *
 * @param lid  the port's LID, 0 on RoCE
 * @param qpn  the queue pair number (24 bits)
 * @param psn  the initial packet sequence number (24 bits)
 * @param gid  the port GID used for the connection, {@link Gid#ZERO} when none
 */
public record QpEndpoint(int lid, int qpn, int psn, Gid gid) {
    /**
     * Validates the value.
     *
     * @param lid the LID (16 bits)
     * @param qpn the QP number (24 bits)
     * @param psn the PSN (24 bits)
     * @param gid the GID
     */
    public QpEndpoint {
        if ((lid & ~0xffff) != 0 || (qpn & ~0xffffff) != 0 || (psn & ~0xffffff) != 0) {
            throw new IllegalArgumentException("LID is 16 bits, QPN and PSN 24 bits: lid=" + lid + " qpn=" + qpn
                    + " psn=" + psn);
        }
        java.util.Objects.requireNonNull(gid, "gid (use Gid.ZERO for none)");
    }
}
