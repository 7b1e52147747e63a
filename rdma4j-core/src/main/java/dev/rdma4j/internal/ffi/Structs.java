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

    /** Every layout the conformance test compares with gcc. */
    public static List<MemoryLayout> all() {
        return List.of(IBV_GID, IBV_DEVICE, IBV_CONTEXT_OPS, IBV_CONTEXT, IBV_DEVICE_ATTR, IBV_PORT_ATTR,
                IBV_GID_ENTRY);
    }

    /** Constants the conformance test also checks: C expression, then the value rdma4j assumes. */
    public static List<Object[]> constants() {
        return List.of(
                new Object[] {"offsetof(struct verbs_context, context)", VERBS_CONTEXT_CONTEXT_OFFSET},
                new Object[] {"offsetof(struct verbs_context, sz)", VERBS_CONTEXT_SZ_OFFSET},
                new Object[] {"offsetof(struct verbs_context, query_port)", VERBS_CONTEXT_QUERY_PORT_OFFSET},
                new Object[] {"sizeof(struct verbs_context)", VERBS_CONTEXT_CONTEXT_OFFSET + IBV_CONTEXT.byteSize()},
                new Object[] {"sizeof(size_t)", SIZE_T.byteSize()});
    }
}
