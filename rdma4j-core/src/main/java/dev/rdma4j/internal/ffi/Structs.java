package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.CLayouts.BE64;
import static dev.rdma4j.internal.ffi.CLayouts.INT;
import static dev.rdma4j.internal.ffi.CLayouts.PTR;
import static dev.rdma4j.internal.ffi.CLayouts.SIZE_T;
import static dev.rdma4j.internal.ffi.CLayouts.U16;
import static dev.rdma4j.internal.ffi.CLayouts.U32;
import static dev.rdma4j.internal.ffi.CLayouts.U64;
import static dev.rdma4j.internal.ffi.CLayouts.U8;
import static dev.rdma4j.internal.ffi.CLayouts.chars;
import static dev.rdma4j.internal.ffi.CLayouts.opaque;
import static dev.rdma4j.internal.ffi.CLayouts.pointers;
import static dev.rdma4j.internal.ffi.CLayouts.struct;
import static dev.rdma4j.internal.ffi.CLayouts.union;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The C structs of {@code <infiniband/verbs.h>} that rdma4j touches, written by hand in declaration
 * order with the C member names (the conformance test compiles them against the real header).
 */
public final class Structs {
    private Structs() {
    }

    public static final GroupLayout IBV_GID = union("union ibv_gid",
            chars("raw", 16),
            struct("struct global", BE64.withName("subnet_prefix"), BE64.withName("interface_id"))
                    .withName("global"));

    /** {@code sizeof(union ibv_gid)}. */
    public static final int GID_BYTES = (int) IBV_GID.byteSize();

    /** {@code struct ibv_grh}: the global route header at the head of every UD receive buffer. */
    public static final StructLayout IBV_GRH = struct("struct ibv_grh",
            U32.withName("version_tclass_flow"),
            U16.withName("paylen"),
            U8.withName("next_hdr"),
            U8.withName("hop_limit"),
            IBV_GID.withName("sgid"),
            IBV_GID.withName("dgid"));
    /** {@code sizeof(struct ibv_grh)} as a compile-time constant, for the API's {@code GlobalRouteHeader.BYTES}. */
    public static final int GRH_BYTES = 40;
    /** {@code offsetof(struct ibv_grh, sgid)}. */
    public static final int GRH_SGID_OFFSET = (int) CLayouts.offset(IBV_GRH, "sgid");
    /** {@code offsetof(struct ibv_grh, dgid)}. */
    public static final int GRH_DGID_OFFSET = (int) CLayouts.offset(IBV_GRH, "dgid");

    public static final StructLayout IBV_DEVICE = struct("struct ibv_device",
            struct("struct _ibv_device_ops", pointers("_dummy1", "_dummy2")).withName("_ops"),
            INT.withName("node_type"),
            INT.withName("transport_type"),
            chars("name", 64),
            chars("dev_name", 64),
            chars("dev_path", 256),
            chars("ibdev_path", 256));

    public static final StructLayout IBV_CONTEXT_OPS = struct("struct ibv_context_ops", pointers(
            "_compat_query_device", "_compat_query_port", "_compat_alloc_pd", "_compat_dealloc_pd",
            "_compat_reg_mr", "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw", "dealloc_mw",
            "_compat_create_cq", "poll_cq", "req_notify_cq", "_compat_cq_event", "_compat_resize_cq",
            "_compat_destroy_cq", "_compat_create_srq", "_compat_modify_srq", "_compat_query_srq",
            "_compat_destroy_srq", "post_srq_recv", "_compat_create_qp", "_compat_query_qp",
            "_compat_modify_qp", "_compat_destroy_qp", "post_send", "post_recv", "_compat_create_ah",
            "_compat_destroy_ah", "_compat_attach_mcast", "_compat_detach_mcast", "_compat_async_event"));

    public static final StructLayout IBV_CONTEXT = struct("struct ibv_context",
            PTR.withName("device"),
            IBV_CONTEXT_OPS.withName("ops"),
            INT.withName("cmd_fd"),
            INT.withName("async_fd"),
            INT.withName("num_comp_vectors"),
            opaque("mutex", 40, 8),
            PTR.withName("abi_compat"));

    /**
     * {@code struct verbs_context} is allocated by libibverbs immediately <em>before</em> the
     * {@code struct ibv_context} it embeds as its last member ({@code verbs_get_ctx} in verbs.h).
     * rdma4j only reads {@code sz} and {@code query_port}, so it keeps their positions as offsets
     * (these three are checked against gcc like the layouts).
     */
    public static final long VERBS_CONTEXT_CONTEXT_OFFSET = 320;
    /** {@code offsetof(struct verbs_context, sz)}. */
    public static final long VERBS_CONTEXT_SZ_OFFSET = 312;
    /** {@code offsetof(struct verbs_context, query_port)}: the first member, it "grows up". */
    public static final long VERBS_CONTEXT_QUERY_PORT_OFFSET = 0;
    /** {@code offsetof(struct verbs_context, query_device_ex)}. */
    public static final long VERBS_CONTEXT_QUERY_DEVICE_EX_OFFSET = 216;
    /** {@code offsetof(struct verbs_context, advise_mr)}. */
    public static final long VERBS_CONTEXT_ADVISE_MR_OFFSET = 8;
    /** {@code offsetof(struct verbs_context, create_cq_ex)}. */
    public static final long VERBS_CONTEXT_CREATE_CQ_EX_OFFSET = 200;
    /** {@code offsetof(struct verbs_context, create_qp_ex)}. */
    public static final long VERBS_CONTEXT_CREATE_QP_EX_OFFSET = 264;

    public static final StructLayout IBV_DEVICE_ATTR = struct("struct ibv_device_attr",
            chars("fw_ver", 64),
            BE64.withName("node_guid"),
            BE64.withName("sys_image_guid"),
            U64.withName("max_mr_size"),
            U64.withName("page_size_cap"),
            U32.withName("vendor_id"),
            U32.withName("vendor_part_id"),
            U32.withName("hw_ver"),
            INT.withName("max_qp"),
            INT.withName("max_qp_wr"),
            U32.withName("device_cap_flags"),
            INT.withName("max_sge"),
            INT.withName("max_sge_rd"),
            INT.withName("max_cq"),
            INT.withName("max_cqe"),
            INT.withName("max_mr"),
            INT.withName("max_pd"),
            INT.withName("max_qp_rd_atom"),
            INT.withName("max_ee_rd_atom"),
            INT.withName("max_res_rd_atom"),
            INT.withName("max_qp_init_rd_atom"),
            INT.withName("max_ee_init_rd_atom"),
            INT.withName("atomic_cap"),
            INT.withName("max_ee"),
            INT.withName("max_rdd"),
            INT.withName("max_mw"),
            INT.withName("max_raw_ipv6_qp"),
            INT.withName("max_raw_ethy_qp"),
            INT.withName("max_mcast_grp"),
            INT.withName("max_mcast_qp_attach"),
            INT.withName("max_total_mcast_qp_attach"),
            INT.withName("max_ah"),
            INT.withName("max_fmr"),
            INT.withName("max_map_per_fmr"),
            INT.withName("max_srq"),
            INT.withName("max_srq_wr"),
            INT.withName("max_srq_sge"),
            U16.withName("max_pkeys"),
            U8.withName("local_ca_ack_delay"),
            U8.withName("phys_port_cnt"));

    /** {@code struct ibv_device_attr_ex}: {@code ibv_query_device_ex}'s answer. */
    public static final StructLayout IBV_DEVICE_ATTR_EX = struct("struct ibv_device_attr_ex",
            IBV_DEVICE_ATTR.withName("orig_attr"),
            U32.withName("comp_mask"),
            struct("struct ibv_odp_caps", U64.withName("general_caps"),
                    struct("struct per_transport_caps", U32.withName("rc_odp_caps"), U32.withName("uc_odp_caps"),
                            U32.withName("ud_odp_caps")).withName("per_transport_caps")).withName("odp_caps"),
            U64.withName("completion_timestamp_mask"),
            U64.withName("hca_core_clock"),
            U64.withName("device_cap_flags_ex"),
            struct("struct ibv_tso_caps", U32.withName("max_tso"), U32.withName("supported_qpts")).withName("tso_caps"),
            struct("struct ibv_rss_caps", U32.withName("supported_qpts"), U32.withName("max_rwq_indirection_tables"),
                    U32.withName("max_rwq_indirection_table_size"), U64.withName("rx_hash_fields_mask"),
                    U8.withName("rx_hash_function")).withName("rss_caps"),
            U32.withName("max_wq_type_rq"),
            struct("struct ibv_packet_pacing_caps", U32.withName("qp_rate_limit_min"),
                    U32.withName("qp_rate_limit_max"), U32.withName("supported_qpts")).withName("packet_pacing_caps"),
            U32.withName("raw_packet_caps"),
            struct("struct ibv_tm_caps", U32.withName("max_rndv_hdr_size"), U32.withName("max_num_tags"),
                    U32.withName("flags"), U32.withName("max_ops"), U32.withName("max_sge")).withName("tm_caps"),
            struct("struct ibv_cq_moderation_caps", U16.withName("max_cq_count"), U16.withName("max_cq_period"))
                    .withName("cq_mod_caps"),
            U64.withName("max_dm_size"),
            struct("struct ibv_pci_atomic_caps", U16.withName("fetch_add"), U16.withName("swap"),
                    U16.withName("compare_swap")).withName("pci_atomic_caps"),
            U32.withName("xrc_odp_caps"),
            U32.withName("phys_port_cnt_ex"));

    public static final StructLayout IBV_PORT_ATTR = struct("struct ibv_port_attr",
            INT.withName("state"),
            INT.withName("max_mtu"),
            INT.withName("active_mtu"),
            INT.withName("gid_tbl_len"),
            U32.withName("port_cap_flags"),
            U32.withName("max_msg_sz"),
            U32.withName("bad_pkey_cntr"),
            U32.withName("qkey_viol_cntr"),
            U16.withName("pkey_tbl_len"),
            U16.withName("lid"),
            U16.withName("sm_lid"),
            U8.withName("lmc"),
            U8.withName("max_vl_num"),
            U8.withName("sm_sl"),
            U8.withName("subnet_timeout"),
            U8.withName("init_type_reply"),
            U8.withName("active_width"),
            U8.withName("active_speed"),
            U8.withName("phys_state"),
            U8.withName("link_layer"),
            U8.withName("flags"),
            U16.withName("port_cap_flags2"));

    public static final StructLayout IBV_GID_ENTRY = struct("struct ibv_gid_entry",
            IBV_GID.withName("gid"),
            U32.withName("gid_index"),
            U32.withName("port_num"),
            U32.withName("gid_type"),
            U32.withName("ndev_ifindex"));

    private static final MemoryLayout MUTEX = opaque("mutex", 40, 8);
    private static final MemoryLayout COND = opaque("cond", 48, 8);

    public static final StructLayout IBV_PD = struct("struct ibv_pd",
            PTR.withName("context"),
            U32.withName("handle"));

    public static final StructLayout IBV_MR = struct("struct ibv_mr",
            PTR.withName("context"),
            PTR.withName("pd"),
            PTR.withName("addr"),
            SIZE_T.withName("length"),
            U32.withName("handle"),
            U32.withName("lkey"),
            U32.withName("rkey"));

    public static final StructLayout IBV_COMP_CHANNEL = struct("struct ibv_comp_channel",
            PTR.withName("context"),
            INT.withName("fd"),
            INT.withName("refcnt"));

    public static final StructLayout IBV_CQ = struct("struct ibv_cq",
            PTR.withName("context"),
            PTR.withName("channel"),
            PTR.withName("cq_context"),
            U32.withName("handle"),
            INT.withName("cqe"),
            MUTEX,
            COND,
            U32.withName("comp_events_completed"),
            U32.withName("async_events_completed"));

    /** {@code struct ibv_cq_ex}: {@code struct ibv_cq}'s members, then the current entry and the poll functions. */
    public static final StructLayout IBV_CQ_EX = cqEx();

    private static StructLayout cqEx() {
        java.util.List<MemoryLayout> m = new java.util.ArrayList<>(java.util.List.of(PTR.withName("context"),
                PTR.withName("channel"), PTR.withName("cq_context"), U32.withName("handle"), INT.withName("cqe"),
                MUTEX, COND, U32.withName("comp_events_completed"), U32.withName("async_events_completed"),
                U32.withName("comp_mask"), INT.withName("status"), U64.withName("wr_id")));
        m.addAll(java.util.List.of(pointers("start_poll", "next_poll", "end_poll", "read_opcode", "read_vendor_err",
                "read_byte_len", "read_imm_data", "read_qp_num", "read_src_qp", "read_wc_flags", "read_slid", "read_sl",
                "read_dlid_path_bits", "read_completion_ts", "read_cvlan", "read_flow_tag", "read_tm_info",
                "read_completion_wallclock_ns")));
        return struct("struct ibv_cq_ex", m.toArray(MemoryLayout[]::new));
    }

    /** {@code struct ibv_cq_init_attr_ex}: {@code ibv_create_cq_ex}'s argument. */
    public static final StructLayout IBV_CQ_INIT_ATTR_EX = struct("struct ibv_cq_init_attr_ex",
            U32.withName("cqe"),
            PTR.withName("cq_context"),
            PTR.withName("channel"),
            U32.withName("comp_vector"),
            U64.withName("wc_flags"),
            U32.withName("comp_mask"),
            U32.withName("flags"),
            PTR.withName("parent_domain"));

    public static final StructLayout IBV_QP = struct("struct ibv_qp",
            PTR.withName("context"),
            PTR.withName("qp_context"),
            PTR.withName("pd"),
            PTR.withName("send_cq"),
            PTR.withName("recv_cq"),
            PTR.withName("srq"),
            U32.withName("handle"),
            U32.withName("qp_num"),
            INT.withName("state"),
            INT.withName("qp_type"),
            MUTEX,
            COND,
            U32.withName("events_completed"));

    public static final StructLayout IBV_QP_CAP = struct("struct ibv_qp_cap",
            U32.withName("max_send_wr"),
            U32.withName("max_recv_wr"),
            U32.withName("max_send_sge"),
            U32.withName("max_recv_sge"),
            U32.withName("max_inline_data"));

    public static final StructLayout IBV_QP_INIT_ATTR = struct("struct ibv_qp_init_attr",
            PTR.withName("qp_context"),
            PTR.withName("send_cq"),
            PTR.withName("recv_cq"),
            PTR.withName("srq"),
            IBV_QP_CAP.withName("cap"),
            INT.withName("qp_type"),
            INT.withName("sq_sig_all"));

    /** {@code struct ibv_qp_init_attr_ex}: {@code ibv_qp_init_attr}'s members, then the extended ones. */
    public static final StructLayout IBV_QP_INIT_ATTR_EX = struct("struct ibv_qp_init_attr_ex",
            PTR.withName("qp_context"),
            PTR.withName("send_cq"),
            PTR.withName("recv_cq"),
            PTR.withName("srq"),
            IBV_QP_CAP.withName("cap"),
            INT.withName("qp_type"),
            INT.withName("sq_sig_all"),
            U32.withName("comp_mask"),
            PTR.withName("pd"),
            PTR.withName("xrcd"),
            U32.withName("create_flags"),
            U16.withName("max_tso_header"),
            PTR.withName("rwq_ind_tbl"),
            struct("struct ibv_rx_hash_conf", U8.withName("rx_hash_function"), U8.withName("rx_hash_key_len"),
                    PTR.withName("rx_hash_key"), U64.withName("rx_hash_fields_mask")).withName("rx_hash_conf"),
            U32.withName("source_qpn"),
            U64.withName("send_ops_flags"));

    /** {@code struct ibv_qp_ex}: the QP, the next request's wr_id and flags, the {@code ibv_wr_*} functions. */
    public static final StructLayout IBV_QP_EX = qpEx();

    private static StructLayout qpEx() {
        java.util.List<MemoryLayout> m = new java.util.ArrayList<>(java.util.List.of(IBV_QP.withName("qp_base"),
                U64.withName("comp_mask"), U64.withName("wr_id"), U32.withName("wr_flags")));
        m.addAll(java.util.List.of(pointers("wr_atomic_cmp_swp", "wr_atomic_fetch_add", "wr_bind_mw", "wr_local_inv",
                "wr_rdma_read", "wr_rdma_write", "wr_rdma_write_imm", "wr_send", "wr_send_imm", "wr_send_inv",
                "wr_send_tso", "wr_set_ud_addr", "wr_set_xrc_srqn", "wr_set_inline_data", "wr_set_inline_data_list",
                "wr_set_sge", "wr_set_sge_list", "wr_start", "wr_complete", "wr_abort", "wr_atomic_write")));
        return struct("struct ibv_qp_ex", m.toArray(MemoryLayout[]::new));
    }

    public static final StructLayout IBV_GLOBAL_ROUTE = struct("struct ibv_global_route",
            IBV_GID.withName("dgid"),
            U32.withName("flow_label"),
            U8.withName("sgid_index"),
            U8.withName("hop_limit"),
            U8.withName("traffic_class"));

    public static final StructLayout IBV_AH_ATTR = struct("struct ibv_ah_attr",
            IBV_GLOBAL_ROUTE.withName("grh"),
            U16.withName("dlid"),
            U8.withName("sl"),
            U8.withName("src_path_bits"),
            U8.withName("static_rate"),
            U8.withName("is_global"),
            U8.withName("port_num"));

    public static final StructLayout IBV_QP_ATTR = struct("struct ibv_qp_attr",
            INT.withName("qp_state"),
            INT.withName("cur_qp_state"),
            INT.withName("path_mtu"),
            INT.withName("path_mig_state"),
            U32.withName("qkey"),
            U32.withName("rq_psn"),
            U32.withName("sq_psn"),
            U32.withName("dest_qp_num"),
            U32.withName("qp_access_flags"),
            IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"),
            IBV_AH_ATTR.withName("alt_ah_attr"),
            U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"),
            U8.withName("en_sqd_async_notify"),
            U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"),
            U8.withName("max_dest_rd_atomic"),
            U8.withName("min_rnr_timer"),
            U8.withName("port_num"),
            U8.withName("timeout"),
            U8.withName("retry_cnt"),
            U8.withName("rnr_retry"),
            U8.withName("alt_port_num"),
            U8.withName("alt_timeout"),
            U32.withName("rate_limit"));

    /** Names starting with '$' stand for C's anonymous unions: the conformance test flattens them. */
    public static final StructLayout IBV_WC = struct("struct ibv_wc",
            U64.withName("wr_id"),
            INT.withName("status"),
            INT.withName("opcode"),
            U32.withName("vendor_err"),
            U32.withName("byte_len"),
            union("union $imm", U32.withName("imm_data"), U32.withName("invalidated_rkey")).withName("$imm"),
            U32.withName("qp_num"),
            U32.withName("src_qp"),
            U32.withName("wc_flags"),
            U16.withName("pkey_index"),
            U16.withName("slid"),
            U8.withName("sl"),
            U8.withName("dlid_path_bits"));

    public static final StructLayout IBV_SGE = struct("struct ibv_sge",
            U64.withName("addr"),
            U32.withName("length"),
            U32.withName("lkey"));

    public static final StructLayout IBV_SEND_WR = struct("struct ibv_send_wr",
            U64.withName("wr_id"),
            PTR.withName("next"),
            PTR.withName("sg_list"),
            INT.withName("num_sge"),
            INT.withName("opcode"),
            U32.withName("send_flags"),
            union("union $imm", U32.withName("imm_data"), U32.withName("invalidate_rkey")).withName("$imm"),
            union("union wr",
                    struct("struct rdma", U64.withName("remote_addr"), U32.withName("rkey")).withName("rdma"),
                    struct("struct atomic", U64.withName("remote_addr"), U64.withName("compare_add"),
                            U64.withName("swap"), U32.withName("rkey")).withName("atomic"),
                    struct("struct ud", PTR.withName("ah"), U32.withName("remote_qpn"),
                            U32.withName("remote_qkey")).withName("ud")).withName("wr"),
            union("union qp_type",
                    struct("struct xrc", U32.withName("remote_srqn")).withName("xrc")).withName("qp_type"),
            union("union $bind",
                    struct("struct bind_mw", PTR.withName("mw"), U32.withName("rkey"),
                            struct("struct ibv_mw_bind_info", PTR.withName("mr"), U64.withName("addr"),
                                    U64.withName("length"), U32.withName("mw_access_flags")).withName("bind_info"))
                            .withName("bind_mw"),
                    struct("struct tso", PTR.withName("hdr"), U16.withName("hdr_sz"), U16.withName("mss"))
                            .withName("tso")).withName("$bind"));

    /** {@code struct ibv_mw}: a memory window ({@code ibv_alloc_mw}); {@code type} is an {@code enum ibv_mw_type}. */
    public static final StructLayout IBV_MW = struct("struct ibv_mw",
            PTR.withName("context"),
            PTR.withName("pd"),
            U32.withName("rkey"),
            U32.withName("handle"),
            INT.withName("type"));

    /** {@code struct ibv_mw_bind}: the argument of {@code ibv_bind_mw} (type 1 windows). */
    public static final StructLayout IBV_MW_BIND = struct("struct ibv_mw_bind",
            U64.withName("wr_id"),
            U32.withName("send_flags"),
            struct("struct ibv_mw_bind_info", PTR.withName("mr"), U64.withName("addr"), U64.withName("length"),
                    U32.withName("mw_access_flags")).withName("bind_info"));

    public static final StructLayout IBV_RECV_WR = struct("struct ibv_recv_wr",
            U64.withName("wr_id"),
            PTR.withName("next"),
            PTR.withName("sg_list"),
            INT.withName("num_sge"));

    public static final StructLayout IBV_AH = struct("struct ibv_ah",
            PTR.withName("context"),
            PTR.withName("pd"),
            U32.withName("handle"));

    public static final StructLayout IBV_SRQ = struct("struct ibv_srq",
            PTR.withName("context"),
            PTR.withName("srq_context"),
            PTR.withName("pd"),
            U32.withName("handle"),
            MUTEX,
            COND,
            U32.withName("events_completed"));

    public static final StructLayout IBV_SRQ_ATTR = struct("struct ibv_srq_attr",
            U32.withName("max_wr"),
            U32.withName("max_sge"),
            U32.withName("srq_limit"));

    public static final StructLayout IBV_SRQ_INIT_ATTR = struct("struct ibv_srq_init_attr",
            PTR.withName("srq_context"),
            IBV_SRQ_ATTR.withName("attr"));

    public static final StructLayout IBV_ASYNC_EVENT = struct("struct ibv_async_event",
            union("union element", PTR.withName("cq"), PTR.withName("qp"), PTR.withName("srq"),
                    PTR.withName("wq"), INT.withName("port_num")).withName("element"),
            INT.withName("event_type"));

    /** Every layout the conformance test compares with gcc. */
    public static List<MemoryLayout> all() {
        return List.of(IBV_GID, IBV_GRH, IBV_DEVICE, IBV_CONTEXT_OPS, IBV_CONTEXT, IBV_DEVICE_ATTR, IBV_DEVICE_ATTR_EX,
                IBV_PORT_ATTR,
                IBV_GID_ENTRY, IBV_PD, IBV_MR, IBV_COMP_CHANNEL, IBV_CQ, IBV_QP, IBV_QP_CAP, IBV_QP_INIT_ATTR,
                IBV_QP_INIT_ATTR_EX, IBV_QP_EX, IBV_CQ_EX, IBV_CQ_INIT_ATTR_EX,
                IBV_GLOBAL_ROUTE, IBV_AH_ATTR, IBV_QP_ATTR, IBV_WC, IBV_SGE, IBV_SEND_WR, IBV_RECV_WR, IBV_AH,
                IBV_MW, IBV_MW_BIND, IBV_SRQ, IBV_SRQ_ATTR, IBV_SRQ_INIT_ATTR, IBV_ASYNC_EVENT);
    }

    /** Constants the conformance test also checks: C expression, then the value rdma4j assumes. */
    public static List<Object[]> constants() {
        return List.of(
                new Object[] {"offsetof(struct verbs_context, context)", VERBS_CONTEXT_CONTEXT_OFFSET},
                new Object[] {"offsetof(struct verbs_context, sz)", VERBS_CONTEXT_SZ_OFFSET},
                new Object[] {"offsetof(struct verbs_context, query_port)", VERBS_CONTEXT_QUERY_PORT_OFFSET},
                new Object[] {"offsetof(struct verbs_context, create_qp_ex)", VERBS_CONTEXT_CREATE_QP_EX_OFFSET},
                new Object[] {"offsetof(struct verbs_context, create_cq_ex)", VERBS_CONTEXT_CREATE_CQ_EX_OFFSET},
                new Object[] {"offsetof(struct verbs_context, query_device_ex)", VERBS_CONTEXT_QUERY_DEVICE_EX_OFFSET},
                new Object[] {"offsetof(struct verbs_context, advise_mr)", VERBS_CONTEXT_ADVISE_MR_OFFSET},
                new Object[] {"sizeof(struct verbs_context)", VERBS_CONTEXT_CONTEXT_OFFSET + IBV_CONTEXT.byteSize()},
                new Object[] {"sizeof(size_t)", SIZE_T.byteSize()},
                new Object[] {"sizeof(struct ibv_grh)", (long) GRH_BYTES},
                new Object[] {"POLLIN", (long) Libc.POLLIN});
    }
}
