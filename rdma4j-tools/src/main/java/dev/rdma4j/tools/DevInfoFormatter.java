package dev.rdma4j.tools;

import dev.rdma4j.Device;
import dev.rdma4j.DeviceAttributes;
import dev.rdma4j.ExtendedDeviceAttributes;
import dev.rdma4j.GidEntry;
import dev.rdma4j.GidType;
import dev.rdma4j.LinkLayer;
import dev.rdma4j.Mtu;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.TransportType;
import java.util.List;
import java.util.Map;

/**
 * Formats device facts line for line as rdma-core's {@code ibv_devinfo} prints them (same names,
 * tabs and value formats), for the fields rdma4j supports: all of {@code struct ibv_device_attr} and
 * {@code struct ibv_port_attr}, the GID table, and with {@code -v} the extended attributes
 * ({@code ibv_query_device_ex}: ODP, completion timestamps, TSO, RSS, packet pacing, tag matching, CQ moderation,
 * device memory) and {@code num_comp_vectors}.
 */
final class DevInfoFormatter {
    private final StringBuilder out = new StringBuilder();

    /** {@code device_cap_flags} bits in the order ibv_devinfo lists them. */
    private static final Map<Integer, String> CAP_FLAGS = new java.util.LinkedHashMap<>();

    static {
        String[] names = {"RESIZE_MAX_WR", "BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "RAW_MULTI", "AUTO_PATH_MIG",
            "CHANGE_PHY_PORT", "UD_AV_PORT_ENFORCE", "CURR_QP_STATE_MOD", "SHUTDOWN_PORT", "INIT_TYPE",
            "PORT_ACTIVE_EVENT", "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "SRQ_RESIZE", "N_NOTIFY_CQ"};
        for (int i = 0; i < names.length; i++) {
            CAP_FLAGS.put(1 << i, names[i]);
        }
        CAP_FLAGS.put(1 << 17, "MEM_WINDOW");
        CAP_FLAGS.put(1 << 18, "UD_IP_CSUM");
        CAP_FLAGS.put(1 << 20, "XRC");
        CAP_FLAGS.put(1 << 21, "MEM_MGT_EXTENSIONS");
        CAP_FLAGS.put(1 << 23, "MEM_WINDOW_TYPE_2A");
        CAP_FLAGS.put(1 << 24, "MEM_WINDOW_TYPE_2B");
        CAP_FLAGS.put(1 << 25, "RC_IP_CSUM");
        CAP_FLAGS.put(1 << 26, "RAW_IP_CSUM");
        CAP_FLAGS.put(1 << 29, "MANAGED_FLOW_STEERING");
    }

    /** One port's facts. */
    record Port(int number, PortAttributes attributes, List<GidEntry> gids) {
    }

    String format(Device d, ExtendedDeviceAttributes x, String boardId, int numCompVectors, List<Port> ports,
            boolean verbose) {
        DeviceAttributes a = x.base();
        line("hca_id:\t%s", d.name());
        line("\ttransport:\t\t\t%s (%d)", transport(d.transportType()), d.transportType().code());
        if (!a.firmwareVersion().isEmpty()) {
            line("\tfw_ver:\t\t\t\t%s", a.firmwareVersion());
        }
        line("\tnode_guid:\t\t\t%s", DeviceAttributes.guidString(a.nodeGuid()));
        line("\tsys_image_guid:\t\t\t%s", DeviceAttributes.guidString(a.systemImageGuid()));
        line("\tvendor_id:\t\t\t0x%04x", a.vendorId());
        line("\tvendor_part_id:\t\t\t%d", a.vendorPartId());
        line("\thw_ver:\t\t\t\t0x%X", a.hardwareVersion());
        if (boardId != null && !boardId.isEmpty()) {
            line("\tboard_id:\t\t\t%s", boardId);
        }
        line("\tphys_port_cnt:\t\t\t%d", a.physicalPortCount());
        if (verbose) {
            deviceDetails(a);
            extended(x);
            line("\tnum_comp_vectors:\t\t%d", numCompVectors);
        }
        for (Port p : ports) {
            PortAttributes pa = p.attributes();
            line("\t\tport:\t%d", p.number());
            line("\t\t\tstate:\t\t\t%s (%d)", "PORT_" + pa.state().name(), pa.state().code());
            line("\t\t\tmax_mtu:\t\t%s (%d)", mtu(pa.maxMtu()), pa.maxMtu().code());
            line("\t\t\tactive_mtu:\t\t%s (%d)", mtu(pa.activeMtu()), pa.activeMtu().code());
            line("\t\t\tsm_lid:\t\t\t%d", pa.smLid());
            line("\t\t\tport_lid:\t\t%d", pa.lid());
            line("\t\t\tport_lmc:\t\t0x%02x", pa.lmc());
            line("\t\t\tlink_layer:\t\t%s", linkLayer(pa.linkLayer()));
            if (verbose) {
                portDetails(d, pa, p.gids());
            }
            out.append('\n');
        }
        return out.toString();
    }

    private void deviceDetails(DeviceAttributes a) {
        line("\tmax_mr_size:\t\t\t0x%x", a.maxMrSize());
        line("\tpage_size_cap:\t\t\t0x%x", a.pageSizeCap());
        line("\tmax_qp:\t\t\t\t%d", a.maxQp());
        line("\tmax_qp_wr:\t\t\t%d", a.maxQpWr());
        line("\tdevice_cap_flags:\t\t0x%08x", a.deviceCapFlags());
        int unknown = a.deviceCapFlags();
        for (Map.Entry<Integer, String> f : CAP_FLAGS.entrySet()) {
            if ((a.deviceCapFlags() & f.getKey()) != 0) {
                line("\t\t\t\t\t%s", f.getValue());
            }
            unknown &= ~f.getKey();
        }
        if (unknown != 0) {
            line("\t\t\t\t\tUnknown flags: 0x%X", unknown);
        }
        line("\tmax_sge:\t\t\t%d", a.maxSge());
        line("\tmax_sge_rd:\t\t\t%d", a.maxSgeRd());
        line("\tmax_cq:\t\t\t\t%d", a.maxCq());
        line("\tmax_cqe:\t\t\t%d", a.maxCqe());
        line("\tmax_mr:\t\t\t\t%d", a.maxMr());
        line("\tmax_pd:\t\t\t\t%d", a.maxPd());
        line("\tmax_qp_rd_atom:\t\t\t%d", a.maxQpRdAtom());
        line("\tmax_ee_rd_atom:\t\t\t%d", a.maxEeRdAtom());
        line("\tmax_res_rd_atom:\t\t%d", a.maxResRdAtom());
        line("\tmax_qp_init_rd_atom:\t\t%d", a.maxQpInitRdAtom());
        line("\tmax_ee_init_rd_atom:\t\t%d", a.maxEeInitRdAtom());
        line("\tatomic_cap:\t\t\t%s (%d)", switch (a.atomicCapability()) {
            case NONE -> "ATOMIC_NONE";
            case HCA -> "ATOMIC_HCA";
            case GLOB -> "ATOMIC_GLOB";
            default -> "invalid atomic capability";
        }, a.atomicCapability().code());
        line("\tmax_ee:\t\t\t\t%d", a.maxEe());
        line("\tmax_rdd:\t\t\t%d", a.maxRdd());
        line("\tmax_mw:\t\t\t\t%d", a.maxMw());
        line("\tmax_raw_ipv6_qp:\t\t%d", a.maxRawIpv6Qp());
        line("\tmax_raw_ethy_qp:\t\t%d", a.maxRawEthyQp());
        line("\tmax_mcast_grp:\t\t\t%d", a.maxMcastGrp());
        line("\tmax_mcast_qp_attach:\t\t%d", a.maxMcastQpAttach());
        line("\tmax_total_mcast_qp_attach:\t%d", a.maxTotalMcastQpAttach());
        line("\tmax_ah:\t\t\t\t%d", a.maxAh());
        line("\tmax_fmr:\t\t\t%d", a.maxFmr());
        if (a.maxFmr() != 0) {
            line("\tmax_map_per_fmr:\t\t%d", a.maxMapPerFmr());
        }
        line("\tmax_srq:\t\t\t%d", a.maxSrq());
        if (a.maxSrq() != 0) {
            line("\tmax_srq_wr:\t\t\t%d", a.maxSrqWr());
            line("\tmax_srq_sge:\t\t\t%d", a.maxSrqSge());
        }
        line("\tmax_pkeys:\t\t\t%d", a.maxPkeys());
        line("\tlocal_ca_ack_delay:\t\t%d", a.localCaAckDelay());
    }

    /** {@code ibv_devinfo -v}'s lines of {@code struct ibv_device_attr_ex} beyond {@code orig_attr}, in its order. */
    private void extended(ExtendedDeviceAttributes x) {
        ExtendedDeviceAttributes.OnDemandPaging odp = x.onDemandPaging();
        line("\tgeneral_odp_caps:");
        flag(odp.generalCaps(), 1, "ODP_SUPPORT");
        flag(odp.generalCaps(), 2, "ODP_SUPPORT_IMPLICIT");
        unknown(odp.generalCaps() & ~3L);
        transport("rc", odp.rc());
        transport("uc", odp.uc());
        transport("ud", odp.ud());
        transport("xrc", odp.xrc());
        if (x.completionTimestampMask() != 0) {
            line("\tcompletion timestamp_mask:\t\t\t0x%016x", x.completionTimestampMask());
        } else {
            line("\tcompletion_timestamp_mask not supported");
        }
        if (x.hcaCoreClockKhz() != 0) {
            line("\thca_core_clock:\t\t\t%dkHZ", x.hcaCoreClockKhz());
        } else {
            line("\tcore clock not supported");
        }
        if (x.rawPacketCaps() != 0) {
            line("\traw packet caps:");
            flag(x.rawPacketCaps(), 1, "C-VLAN stripping offload");
            flag(x.rawPacketCaps(), 2, "Scatter FCS offload");
            flag(x.rawPacketCaps(), 4, "IP csum offload");
            flag(x.rawPacketCaps(), 8, "Delay drop");
        }
        line("\tdevice_cap_flags_ex:\t\t0x%X", x.deviceCapFlagsEx());
        long ex = x.deviceCapFlagsEx() & 0xffffffff00000000L;
        flag(ex, 1L << 34, "RAW_SCATTER_FCS");
        flag(ex, 1L << 36, "PCI_WRITE_END_PADDING");
        unknown(ex & ~(1L << 34 | 1L << 36));
        line("\ttso_caps:");
        line("\t\tmax_tso:\t\t\t%d", x.maxTso());
        if (x.maxTso() != 0) {
            supportedQps(x.tsoSupportedQpTypes());
        }
        line("\trss_caps:");
        line("\t\tmax_rwq_indirection_tables:\t\t\t%d", Integer.toUnsignedLong(x.maxRwqIndirectionTables()));
        line("\t\tmax_rwq_indirection_table_size:\t\t\t%d", Integer.toUnsignedLong(x.maxRwqIndirectionTableSize()));
        line("\t\trx_hash_function:\t\t\t\t0x%x", x.rxHashFunction());
        line("\t\trx_hash_fields_mask:\t\t\t\t0x%X", x.rxHashFieldsMask());
        if (x.rssSupportedQpTypes() != 0) {
            supportedQps(x.rssSupportedQpTypes());
        }
        line("\tmax_wq_type_rq:\t\t\t%d", Integer.toUnsignedLong(x.maxWqTypeRq()));
        line("\tpacket_pacing_caps:");
        line("\t\tqp_rate_limit_min:\t%dkbps", Integer.toUnsignedLong(x.qpRateLimitMinKbps()));
        line("\t\tqp_rate_limit_max:\t%dkbps", Integer.toUnsignedLong(x.qpRateLimitMaxKbps()));
        if (x.qpRateLimitMaxKbps() != 0) {
            supportedQps(x.packetPacingQpTypes());
        }
        if (x.tagMatchingMaxTags() != 0) {
            line("\tmax_rndv_hdr_size:\t\t%d", Integer.toUnsignedLong(x.tagMatchingMaxRndvHdrSize()));
            line("\tmax_num_tags:\t\t\t%d", Integer.toUnsignedLong(x.tagMatchingMaxTags()));
            line("\tmax_ops:\t\t\t%d", Integer.toUnsignedLong(x.tagMatchingMaxOps()));
            line("\tmax_sge:\t\t\t%d", Integer.toUnsignedLong(x.tagMatchingMaxSge()));
            line("\tflags:");
            flag(x.tagMatchingFlags(), 1, "IBV_TM_CAP_RC");
        } else {
            line("\ttag matching not supported");
        }
        if (x.maxCqModerationCount() != 0 && x.maxCqModerationPeriodUs() != 0) {
            out.append('\n');
            line("\tcq moderation caps:");
            line("\t\tmax_cq_count:\t%d", x.maxCqModerationCount());
            line("\t\tmax_cq_period:\t%d us", x.maxCqModerationPeriodUs());
            out.append('\n');
        }
        if (x.maxDeviceMemory() != 0) {
            line("\tmaximum available device memory:\t%sBytes", Long.toUnsignedString(x.maxDeviceMemory()));
            out.append('\n');
        }
    }

    private void flag(long flags, long bit, String name) {
        if ((flags & bit) != 0) {
            line("\t\t\t\t\t%s", name);
        }
    }

    private void unknown(long rest) {
        if (rest != 0) {
            line("\t\t\t\t\tUnknown flags: 0x%X", rest);
        }
    }

    /** {@code print_odp_trans_caps}. */
    private void transport(String name, int caps) {
        line("\t%s_odp_caps:", name);
        if (caps == 0) {
            line("\t\t\t\t\tNO SUPPORT");
            return;
        }
        String[] names = {"SUPPORT_SEND", "SUPPORT_RECV", "SUPPORT_WRITE", "SUPPORT_READ", "SUPPORT_ATOMIC",
            "SUPPORT_SRQ"};
        for (int i = 0; i < names.length; i++) {
            flag(caps, 1 << i, names[i]);
        }
        unknown(Integer.toUnsignedLong(caps) & ~0x3fL);
    }

    /** The {@code supported_qp:} list of TSO, RSS and packet pacing ({@code 1 << IBV_QPT_RAW_PACKET}, {@code UD}). */
    private void supportedQps(int qpts) {
        line("\t\tsupported_qp:");
        flag(qpts, 1 << 8, "SUPPORT_RAW_PACKET");
        flag(qpts, 1 << 4, "SUPPORT_UD");
        unknown(Integer.toUnsignedLong(qpts) & ~(1L << 8 | 1L << 4));
    }

    private void portDetails(Device d, PortAttributes pa, List<GidEntry> gids) {
        line("\t\t\tmax_msg_sz:\t\t0x%x", pa.maxMessageSize());
        line("\t\t\tport_cap_flags:\t\t0x%08x", pa.portCapFlags());
        line("\t\t\tport_cap_flags2:\t0x%04x", pa.portCapFlags2());
        line("\t\t\tmax_vl_num:\t\t%s (%d)", switch (pa.maxVlNum()) {
            case 1 -> "1";
            case 2 -> "2";
            case 3 -> "4";
            case 4 -> "8";
            case 5 -> "15";
            default -> "invalid value";
        }, pa.maxVlNum());
        line("\t\t\tbad_pkey_cntr:\t\t0x%x", pa.badPkeyCounter());
        line("\t\t\tqkey_viol_cntr:\t\t0x%x", pa.qkeyViolationCounter());
        line("\t\t\tsm_sl:\t\t\t%d", pa.smSl());
        line("\t\t\tpkey_tbl_len:\t\t%d", pa.pkeyTableLength());
        line("\t\t\tgid_tbl_len:\t\t%d", pa.gidTableLength());
        line("\t\t\tsubnet_timeout:\t\t%d", pa.subnetTimeout());
        line("\t\t\tinit_type_reply:\t%d", pa.initTypeReply());
        line("\t\t\tactive_width:\t\t%sX (%d)", switch (pa.activeWidth()) {
            case 1 -> "1";
            case 2 -> "4";
            case 4 -> "8";
            case 8 -> "12";
            case 16 -> "2";
            default -> "invalid width";
        }, pa.activeWidth());
        line("\t\t\tactive_speed:\t\t%s (%d)", switch (pa.activeSpeed()) {
            case 1 -> "2.5 Gbps";
            case 2 -> "5.0 Gbps";
            case 4, 8 -> "10.0 Gbps";
            case 16 -> "14.0 Gbps";
            case 32 -> "25.0 Gbps";
            case 64 -> "50.0 Gbps";
            case 128 -> "100.0 Gbps";
            default -> "invalid speed";
        }, pa.activeSpeed());
        if (d.transportType() == TransportType.IB) { // RoCE too: its transport is IB
            line("\t\t\tphys_state:\t\t%s (%d)", switch (pa.physicalState()) {
                case 1 -> "SLEEP";
                case 2 -> "POLLING";
                case 3 -> "DISABLED";
                case 4 -> "PORT_CONFIGURATION TRAINNING";
                case 5 -> "LINK_UP";
                case 6 -> "LINK_ERROR_RECOVERY";
                case 7 -> "PHY TEST";
                default -> "invalid physical state";
            }, pa.physicalState());
        }
        for (GidEntry g : gids) {
            if (g.gid().isZero()) {
                continue;
            }
            String suffix = pa.linkLayer() == LinkLayer.ETHERNET
                    ? (g.type() == GidType.ROCE_V2 ? ", RoCE v2" : ", RoCE v1") : "";
            String text = g.type() == GidType.ROCE_V2 ? g.gid().toString() : g.gid().toRawString();
            line("\t\t\tGID[%3d]:\t\t%s%s", g.index(), text, suffix);
        }
    }

    private static String transport(TransportType t) {
        return switch (t) {
            case IB -> "InfiniBand";
            case IWARP -> "iWARP";
            case USNIC -> "usNIC";
            case USNIC_UDP -> "usNIC UDP";
            case UNSPECIFIED -> "unspecified";
            default -> "invalid transport";
        };
    }

    private static String mtu(Mtu m) {
        return m == Mtu.UNKNOWN ? "invalid MTU" : Integer.toString(m.bytes());
    }

    private static String linkLayer(LinkLayer l) {
        return switch (l) {
            case UNSPECIFIED -> "Unspecified";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
            default -> "Unknown";
        };
    }

    private void line(String format, Object... args) {
        out.append(String.format(format, args)).append('\n');
    }
}
