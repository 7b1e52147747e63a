package dev.rdma4j.connect;

import dev.rdma4j.internal.ffi.RdmaCm;

/**
 * The rdma_cm port space of an id ({@code enum rdma_port_space}): what kind of queue pair its connections have and
 * which ports it shares. Constants only.
 */
public enum CmPortSpace {
    /** {@code RDMA_PS_TCP}: reliable connections (RC), {@link CmConnection}. */
    TCP(RdmaCm.RDMA_PS_TCP),
    /**
     * {@code RDMA_PS_UDP}: unreliable datagrams (UD), {@link CmDatagram}: a peer resolved by SIDR (service ID
     * resolution) instead of a connection, and multicast groups.
     */
    UDP(RdmaCm.RDMA_PS_UDP);

    private final int code;

    CmPortSpace(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code rdma_port_space} number
     */
    public int code() {
        return code;
    }
}
