package dev.rdma4j;

/**
 * The state and capabilities of a port ({@code struct ibv_port_attr}, from {@code ibv_query_port}).
 *
 * @param state               {@code state}
 * @param maxMtu              {@code max_mtu}
 * @param activeMtu           {@code active_mtu}: the MTU to use on this port's paths
 * @param gidTableLength      {@code gid_tbl_len}
 * @param portCapFlags        {@code port_cap_flags}
 * @param maxMessageSize      {@code max_msg_sz}, bytes (unsigned)
 * @param badPkeyCounter      {@code bad_pkey_cntr}
 * @param qkeyViolationCounter {@code qkey_viol_cntr}
 * @param pkeyTableLength     {@code pkey_tbl_len}
 * @param lid                 {@code lid}: the port's local identifier (0 on RoCE)
 * @param smLid               {@code sm_lid}
 * @param lmc                 {@code lmc}
 * @param maxVlNum            {@code max_vl_num}
 * @param smSl                {@code sm_sl}
 * @param subnetTimeout       {@code subnet_timeout}
 * @param initTypeReply       {@code init_type_reply}
 * @param activeWidth         {@code active_width} (encoded: 1=1X, 2=4X, 4=8X, 8=12X, 16=2X)
 * @param activeSpeed         {@code active_speed} (encoded: 1=2.5 Gbps ... 128=100 Gbps)
 * @param physicalState       {@code phys_state}
 * @param linkLayer           {@code link_layer}
 * @param flags               {@code flags}
 * @param portCapFlags2       {@code port_cap_flags2}
 */
public record PortAttributes(
        PortState state, Mtu maxMtu, Mtu activeMtu, int gidTableLength, int portCapFlags, long maxMessageSize,
        int badPkeyCounter, int qkeyViolationCounter, int pkeyTableLength, int lid, int smLid, int lmc,
        int maxVlNum, int smSl, int subnetTimeout, int initTypeReply, int activeWidth, int activeSpeed,
        int physicalState, LinkLayer linkLayer, int flags, int portCapFlags2) {

    /**
     * Whether paths from this port need a GRH with GIDs (RoCE) rather than LIDs (InfiniBand).
     *
     * @return {@code true} for an Ethernet link layer
     */
    public boolean isRoce() {
        return linkLayer == LinkLayer.ETHERNET;
    }

    /** The attributes the bindings read, the C enum values made typed. */
    static PortAttributes of(dev.rdma4j.internal.ffi.DeviceVerbs.PortAttrs a) {
        return new PortAttributes(PortState.of(a.state()), Mtu.of(a.maxMtu()), Mtu.of(a.activeMtu()), a.gidTblLen(),
                a.portCapFlags(), a.maxMsgSz(), a.badPkeyCntr(), a.qkeyViolCntr(), a.pkeyTblLen(), a.lid(), a.smLid(),
                a.lmc(), a.maxVlNum(), a.smSl(), a.subnetTimeout(), a.initTypeReply(), a.activeWidth(),
                a.activeSpeed(), a.physState(), LinkLayer.of(a.linkLayer()), a.flags(), a.portCapFlags2());
    }
}
