package dev.rdma4j;

/**
 * What a device can do ({@code struct ibv_device_attr}, from {@code ibv_query_device}). GUIDs are in
 * host order; {@link #guidString(long)} formats them as {@code ibv_devinfo} does.
 *
 * @param firmwareVersion       {@code fw_ver}
 * @param nodeGuid              {@code node_guid}
 * @param systemImageGuid       {@code sys_image_guid}
 * @param maxMrSize             {@code max_mr_size}: largest registrable region, bytes
 * @param pageSizeCap           {@code page_size_cap}: supported page sizes, a bit per size
 * @param vendorId              {@code vendor_id}
 * @param vendorPartId          {@code vendor_part_id}
 * @param hardwareVersion       {@code hw_ver}
 * @param maxQp                 {@code max_qp}
 * @param maxQpWr               {@code max_qp_wr}: deepest send or receive queue
 * @param deviceCapFlags        {@code device_cap_flags} ({@code IBV_DEVICE_*} bits)
 * @param maxSge                {@code max_sge}: scatter/gather entries per send or receive request
 * @param maxSgeRd              {@code max_sge_rd}: scatter/gather entries per RDMA read
 * @param maxCq                 {@code max_cq}
 * @param maxCqe                {@code max_cqe}: largest completion queue
 * @param maxMr                 {@code max_mr}
 * @param maxPd                 {@code max_pd}
 * @param maxQpRdAtom           {@code max_qp_rd_atom}: outstanding RDMA reads/atomics a QP can be target of
 * @param maxEeRdAtom           {@code max_ee_rd_atom}
 * @param maxResRdAtom          {@code max_res_rd_atom}
 * @param maxQpInitRdAtom       {@code max_qp_init_rd_atom}: outstanding RDMA reads/atomics a QP can initiate
 * @param maxEeInitRdAtom       {@code max_ee_init_rd_atom}
 * @param atomicCapability      {@code atomic_cap}
 * @param maxEe                 {@code max_ee}
 * @param maxRdd                {@code max_rdd}
 * @param maxMw                 {@code max_mw}
 * @param maxRawIpv6Qp          {@code max_raw_ipv6_qp}
 * @param maxRawEthyQp          {@code max_raw_ethy_qp}
 * @param maxMcastGrp           {@code max_mcast_grp}
 * @param maxMcastQpAttach      {@code max_mcast_qp_attach}
 * @param maxTotalMcastQpAttach {@code max_total_mcast_qp_attach}
 * @param maxAh                 {@code max_ah}
 * @param maxFmr                {@code max_fmr}
 * @param maxMapPerFmr          {@code max_map_per_fmr}
 * @param maxSrq                {@code max_srq}
 * @param maxSrqWr              {@code max_srq_wr}
 * @param maxSrqSge             {@code max_srq_sge}
 * @param maxPkeys              {@code max_pkeys}
 * @param localCaAckDelay       {@code local_ca_ack_delay}
 * @param physicalPortCount     {@code phys_port_cnt}: ports are numbered from 1 to this
 */
public record DeviceAttributes(
        String firmwareVersion, long nodeGuid, long systemImageGuid, long maxMrSize, long pageSizeCap,
        int vendorId, int vendorPartId, int hardwareVersion, int maxQp, int maxQpWr, int deviceCapFlags,
        int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
        int maxEeRdAtom, int maxResRdAtom, int maxQpInitRdAtom, int maxEeInitRdAtom,
        AtomicCapability atomicCapability, int maxEe, int maxRdd, int maxMw, int maxRawIpv6Qp,
        int maxRawEthyQp, int maxMcastGrp, int maxMcastQpAttach, int maxTotalMcastQpAttach, int maxAh,
        int maxFmr, int maxMapPerFmr, int maxSrq, int maxSrqWr, int maxSrqSge, int maxPkeys,
        int localCaAckDelay, int physicalPortCount) {

    /**
     * Formats a GUID as {@code ibv_devinfo} does: four groups of four hex digits.
     *
     * @param guid a GUID in host order
     * @return e.g. {@code "5054:00ff:fe12:3456"}
     */
    public static String guidString(long guid) {
        return String.format("%04x:%04x:%04x:%04x", (guid >>> 48) & 0xffff, (guid >>> 32) & 0xffff,
                (guid >>> 16) & 0xffff, guid & 0xffff);
    }

    /** The attributes the bindings read, the C enum value made typed. */
    static DeviceAttributes of(dev.rdma4j.internal.ffi.DeviceVerbs.DeviceAttrs a) {
        return new DeviceAttributes(a.fwVer(), a.nodeGuid(), a.sysImageGuid(), a.maxMrSize(), a.pageSizeCap(),
                a.vendorId(), a.vendorPartId(), a.hwVer(), a.maxQp(), a.maxQpWr(), a.deviceCapFlags(), a.maxSge(),
                a.maxSgeRd(), a.maxCq(), a.maxCqe(), a.maxMr(), a.maxPd(), a.maxQpRdAtom(), a.maxEeRdAtom(),
                a.maxResRdAtom(), a.maxQpInitRdAtom(), a.maxEeInitRdAtom(), AtomicCapability.of(a.atomicCap()),
                a.maxEe(), a.maxRdd(), a.maxMw(), a.maxRawIpv6Qp(), a.maxRawEthyQp(), a.maxMcastGrp(),
                a.maxMcastQpAttach(), a.maxTotalMcastQpAttach(), a.maxAh(), a.maxFmr(), a.maxMapPerFmr(), a.maxSrq(),
                a.maxSrqWr(), a.maxSrqSge(), a.maxPkeys(), a.localCaAckDelay(), a.physPortCnt());
    }
}
