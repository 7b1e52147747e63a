package dev.rdma4j;

import dev.rdma4j.internal.ffi.CEnums;
import dev.rdma4j.internal.ffi.DeviceVerbs;

/**
 * What a device grants beyond {@link DeviceAttributes} ({@code struct ibv_device_attr_ex}, from
 * {@code ibv_query_device_ex}): on-demand paging, completion timestamps, the extended capability flags, TSO, RSS,
 * packet pacing, tag matching, CQ moderation, device memory, PCI atomics. A provider without
 * {@code query_device_ex} answers with the base attributes and zeros ({@link #extended()} false), as verbs.h's inline
 * does.
 *
 * @param base                       {@code orig_attr}
 * @param extended                   whether the provider answered {@code query_device_ex}
 * @param onDemandPaging             {@code odp_caps} and {@code xrc_odp_caps}
 * @param completionTimestampMask    {@code completion_timestamp_mask}: 0 when completions carry no timestamp
 * @param hcaCoreClockKhz            {@code hca_core_clock}: 0 when not reported
 * @param deviceCapFlagsEx           {@code device_cap_flags_ex}
 * @param maxTso                     {@code tso_caps.max_tso}
 * @param tsoSupportedQpTypes        {@code tso_caps.supported_qpts} (bit {@code 1 << qp_type})
 * @param rssSupportedQpTypes        {@code rss_caps.supported_qpts}
 * @param maxRwqIndirectionTables    {@code rss_caps.max_rwq_indirection_tables}
 * @param maxRwqIndirectionTableSize {@code rss_caps.max_rwq_indirection_table_size}
 * @param rxHashFieldsMask           {@code rss_caps.rx_hash_fields_mask}
 * @param rxHashFunction             {@code rss_caps.rx_hash_function}
 * @param maxWqTypeRq                {@code max_wq_type_rq}
 * @param qpRateLimitMinKbps         {@code packet_pacing_caps.qp_rate_limit_min}
 * @param qpRateLimitMaxKbps         {@code packet_pacing_caps.qp_rate_limit_max}
 * @param packetPacingQpTypes        {@code packet_pacing_caps.supported_qpts}
 * @param rawPacketCaps              {@code raw_packet_caps}
 * @param tagMatchingMaxTags         {@code tm_caps.max_num_tags}: 0 without tag matching
 * @param tagMatchingMaxRndvHdrSize  {@code tm_caps.max_rndv_hdr_size}
 * @param tagMatchingFlags           {@code tm_caps.flags}
 * @param tagMatchingMaxOps          {@code tm_caps.max_ops}
 * @param tagMatchingMaxSge          {@code tm_caps.max_sge}
 * @param maxCqModerationCount       {@code cq_mod_caps.max_cq_count}
 * @param maxCqModerationPeriodUs    {@code cq_mod_caps.max_cq_period}
 * @param maxDeviceMemory            {@code max_dm_size}
 * @param physPortCountEx            {@code phys_port_cnt_ex}
 */
public record ExtendedDeviceAttributes(DeviceAttributes base, boolean extended, OnDemandPaging onDemandPaging,
        long completionTimestampMask, long hcaCoreClockKhz, long deviceCapFlagsEx, int maxTso, int tsoSupportedQpTypes,
        int rssSupportedQpTypes, int maxRwqIndirectionTables, int maxRwqIndirectionTableSize, long rxHashFieldsMask,
        int rxHashFunction, int maxWqTypeRq, int qpRateLimitMinKbps, int qpRateLimitMaxKbps, int packetPacingQpTypes,
        int rawPacketCaps, int tagMatchingMaxTags, int tagMatchingMaxRndvHdrSize, int tagMatchingFlags,
        int tagMatchingMaxOps, int tagMatchingMaxSge, int maxCqModerationCount, int maxCqModerationPeriodUs,
        long maxDeviceMemory, int physPortCountEx) {

    /**
     * On-demand paging ({@code struct ibv_odp_caps}): registration with {@link AccessFlag#ON_DEMAND} and
     * {@link MemoryRegion#advise} need it.
     *
     * @param generalCaps {@code general_caps}: {@code IBV_ODP_SUPPORT}, {@code IBV_ODP_SUPPORT_IMPLICIT}
     * @param rc          {@code per_transport_caps.rc_odp_caps} ({@code IBV_ODP_SUPPORT_SEND}, ...)
     * @param uc          {@code per_transport_caps.uc_odp_caps}
     * @param ud          {@code per_transport_caps.ud_odp_caps}
     * @param xrc         {@code xrc_odp_caps}
     */
    public record OnDemandPaging(long generalCaps, int rc, int uc, int ud, int xrc) {
        /**
         * Whether the device pages on demand at all.
         *
         * @return {@code IBV_ODP_SUPPORT} is set
         */
        public boolean supported() {
            return (generalCaps & CEnums.IBV_ODP_SUPPORT) != 0;
        }

        /**
         * Whether implicit on-demand regions (the whole address space) are supported.
         *
         * @return {@code IBV_ODP_SUPPORT_IMPLICIT} is set
         */
        public boolean implicit() {
            return (generalCaps & CEnums.IBV_ODP_SUPPORT_IMPLICIT) != 0;
        }
    }

    static ExtendedDeviceAttributes of(DeviceVerbs.DeviceAttrsEx x) {
        return new ExtendedDeviceAttributes(DeviceAttributes.of(x.base()), x.extended(), new OnDemandPaging(
                x.odpGeneralCaps(), x.rcOdpCaps(), x.ucOdpCaps(), x.udOdpCaps(), x.xrcOdpCaps()),
                x.completionTimestampMask(), x.hcaCoreClock(), x.deviceCapFlagsEx(), x.maxTso(), x.tsoSupportedQpts(),
                x.rssSupportedQpts(), x.maxRwqIndirectionTables(), x.maxRwqIndirectionTableSize(),
                x.rxHashFieldsMask(), x.rxHashFunction(), x.maxWqTypeRq(), x.qpRateLimitMin(), x.qpRateLimitMax(),
                x.packetPacingSupportedQpts(), x.rawPacketCaps(), x.maxNumTags(), x.maxRndvHdrSize(), x.tmFlags(),
                x.tmMaxOps(), x.tmMaxSge(), x.maxCqCount(), x.maxCqPeriod(),
                x.maxDmSize(), x.physPortCntEx());
    }
}
