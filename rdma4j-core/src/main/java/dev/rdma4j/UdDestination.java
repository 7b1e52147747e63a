package dev.rdma4j;

/**
 * Where a UD send goes: the address handle of the route, the destination queue pair's number and its Q_Key (the
 * {@code wr.ud} members of {@code struct ibv_send_wr}); {@link SendBatch#to(UdDestination)} addresses a send with it.
 * A multicast group's destination has queue pair number {@link #MULTICAST_QPN}. rdma_cm hands these out for a UD
 * peer it resolved and for a multicast group joined ({@code dev.rdma4j.connect.CmDatagram}).
 *
 * <p>Threading: immutable; the handle is thread-safe.
 *
 * @param addressHandle the route ({@code ibv_create_ah})
 * @param qpNumber      the destination queue pair number ({@code remote_qpn}), 24 bits
 * @param qkey          the destination's Q_Key ({@code remote_qkey})
 */
public record UdDestination(AddressHandle addressHandle, int qpNumber, int qkey) {
    /** The queue pair number of a multicast destination ({@code 0xFFFFFF}). */
    public static final int MULTICAST_QPN = 0xFFFFFF;

    /**
     * Checks the values.
     *
     * @param addressHandle the route, not null
     * @param qpNumber      0 to {@code 0xFFFFFF}
     * @param qkey          any 32 bits
     * @throws IllegalArgumentException if the queue pair number does not fit 24 bits
     */
    public UdDestination {
        java.util.Objects.requireNonNull(addressHandle, "addressHandle");
        Ranges.check("qpNumber", qpNumber, 0, MULTICAST_QPN);
    }
}
