package dev.rdma4j.internal.ffi;

/**
 * The C enums the API's enums stand for ({@code QpState}, {@code WcStatus}, {@code WcOpcode}, {@code Mtu},
 * {@code AccessFlag}, {@code AsyncEventType}, {@code CmEventType}, ...), each constant named and valued as in
 * {@code <infiniband/verbs.h>} or {@code <rdma/rdma_cma.h>}: the only place their numbers are written.
 * {@link CConstants#all()} lists every constant here by its name, so {@code LayoutConformanceTest} compares each
 * with gcc's value.
 *
 * <p>Threading: constants only.
 */
public final class CEnums {
    private CEnums() {
    }

    /** {@code enum ibv_qp_state}: a queue pair's state. */
    public static final int IBV_QPS_RESET = 0;
    public static final int IBV_QPS_INIT = 1;
    public static final int IBV_QPS_RTR = 2;
    public static final int IBV_QPS_RTS = 3;
    public static final int IBV_QPS_SQD = 4;
    public static final int IBV_QPS_SQE = 5;
    public static final int IBV_QPS_ERR = 6;
    public static final int IBV_QPS_UNKNOWN = 7;

    /** {@code enum ibv_wc_status}: a work completion's status. */
    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_LOC_LEN_ERR = 1;
    public static final int IBV_WC_LOC_QP_OP_ERR = 2;
    public static final int IBV_WC_LOC_EEC_OP_ERR = 3;
    public static final int IBV_WC_LOC_PROT_ERR = 4;
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    public static final int IBV_WC_MW_BIND_ERR = 6;
    public static final int IBV_WC_BAD_RESP_ERR = 7;
    public static final int IBV_WC_LOC_ACCESS_ERR = 8;
    public static final int IBV_WC_REM_INV_REQ_ERR = 9;
    public static final int IBV_WC_REM_ACCESS_ERR = 10;
    public static final int IBV_WC_REM_OP_ERR = 11;
    public static final int IBV_WC_RETRY_EXC_ERR = 12;
    public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
    public static final int IBV_WC_LOC_RDD_VIOL_ERR = 14;
    public static final int IBV_WC_REM_INV_RD_REQ_ERR = 15;
    public static final int IBV_WC_REM_ABORT_ERR = 16;
    public static final int IBV_WC_INV_EECN_ERR = 17;
    public static final int IBV_WC_INV_EEC_STATE_ERR = 18;
    public static final int IBV_WC_FATAL_ERR = 19;
    public static final int IBV_WC_RESP_TIMEOUT_ERR = 20;
    public static final int IBV_WC_GENERAL_ERR = 21;
    public static final int IBV_WC_TM_ERR = 22;
    public static final int IBV_WC_TM_RNDV_INCOMPLETE = 23;

    /** {@code enum ibv_wc_opcode}: what a completion completed ({@code opcode & IBV_WC_RECV}: a receive). */
    public static final int IBV_WC_SEND = 0;
    public static final int IBV_WC_RDMA_WRITE = 1;
    public static final int IBV_WC_RDMA_READ = 2;
    public static final int IBV_WC_COMP_SWAP = 3;
    public static final int IBV_WC_FETCH_ADD = 4;
    public static final int IBV_WC_BIND_MW = 5;
    public static final int IBV_WC_LOCAL_INV = 6;
    public static final int IBV_WC_TSO = 7;
    public static final int IBV_WC_ATOMIC_WRITE = 9;
    public static final int IBV_WC_RECV = 1 << 7;
    public static final int IBV_WC_RECV_RDMA_WITH_IMM = IBV_WC_RECV + 1;

    /** {@code enum ibv_wc_flags}: a work completion's flags. */
    public static final int IBV_WC_GRH = 1;
    public static final int IBV_WC_WITH_IMM = 1 << 1;
    public static final int IBV_WC_WITH_INV = 1 << 3;

    /** {@code enum ibv_mtu}. */
    public static final int IBV_MTU_256 = 1;
    public static final int IBV_MTU_512 = 2;
    public static final int IBV_MTU_1024 = 3;
    public static final int IBV_MTU_2048 = 4;
    public static final int IBV_MTU_4096 = 5;

    /** {@code enum ibv_node_type}. */
    public static final int IBV_NODE_UNKNOWN = -1;
    public static final int IBV_NODE_CA = 1;
    public static final int IBV_NODE_SWITCH = 2;
    public static final int IBV_NODE_ROUTER = 3;
    public static final int IBV_NODE_RNIC = 4;
    public static final int IBV_NODE_USNIC = 5;
    public static final int IBV_NODE_USNIC_UDP = 6;
    public static final int IBV_NODE_UNSPECIFIED = 7;

    /** {@code enum ibv_port_state}. */
    public static final int IBV_PORT_NOP = 0;
    public static final int IBV_PORT_DOWN = 1;
    public static final int IBV_PORT_INIT = 2;
    public static final int IBV_PORT_ARMED = 3;
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_PORT_ACTIVE_DEFER = 5;

    /** {@code enum ibv_transport_type}. */
    public static final int IBV_TRANSPORT_UNKNOWN = -1;
    public static final int IBV_TRANSPORT_IB = 0;
    public static final int IBV_TRANSPORT_IWARP = 1;
    public static final int IBV_TRANSPORT_USNIC = 2;
    public static final int IBV_TRANSPORT_USNIC_UDP = 3;
    public static final int IBV_TRANSPORT_UNSPECIFIED = 4;

    /** {@code IBV_LINK_LAYER_*}: a port's link layer. */
    public static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    /** {@code enum ibv_atomic_cap}. */
    public static final int IBV_ATOMIC_NONE = 0;
    public static final int IBV_ATOMIC_HCA = 1;
    public static final int IBV_ATOMIC_GLOB = 2;

    /** {@code enum ibv_gid_type}. */
    public static final int IBV_GID_TYPE_IB = 0;
    public static final int IBV_GID_TYPE_ROCE_V1 = 1;
    public static final int IBV_GID_TYPE_ROCE_V2 = 2;

    /** {@code enum ibv_qp_type} (the transports rdma4j supports). */
    public static final int IBV_QPT_RC = 2;
    public static final int IBV_QPT_UC = 3;
    public static final int IBV_QPT_UD = 4;

    /** {@code enum ibv_access_flags}. */
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;
    public static final int IBV_ACCESS_MW_BIND = 1 << 4;
    public static final int IBV_ACCESS_ZERO_BASED = 1 << 5;
    public static final int IBV_ACCESS_ON_DEMAND = 1 << 6;
    public static final int IBV_ACCESS_HUGETLB = 1 << 7;
    public static final int IBV_ACCESS_RELAXED_ORDERING = 1 << 20;

    /** {@code enum ibv_event_type}: an asynchronous event's kind. */
    public static final int IBV_EVENT_CQ_ERR = 0;
    public static final int IBV_EVENT_QP_FATAL = 1;
    public static final int IBV_EVENT_QP_REQ_ERR = 2;
    public static final int IBV_EVENT_QP_ACCESS_ERR = 3;
    public static final int IBV_EVENT_COMM_EST = 4;
    public static final int IBV_EVENT_SQ_DRAINED = 5;
    public static final int IBV_EVENT_PATH_MIG = 6;
    public static final int IBV_EVENT_PATH_MIG_ERR = 7;
    public static final int IBV_EVENT_DEVICE_FATAL = 8;
    public static final int IBV_EVENT_PORT_ACTIVE = 9;
    public static final int IBV_EVENT_PORT_ERR = 10;
    public static final int IBV_EVENT_LID_CHANGE = 11;
    public static final int IBV_EVENT_PKEY_CHANGE = 12;
    public static final int IBV_EVENT_SM_CHANGE = 13;
    public static final int IBV_EVENT_SRQ_ERR = 14;
    public static final int IBV_EVENT_SRQ_LIMIT_REACHED = 15;
    public static final int IBV_EVENT_QP_LAST_WQE_REACHED = 16;
    public static final int IBV_EVENT_CLIENT_REREGISTER = 17;
    public static final int IBV_EVENT_GID_CHANGE = 18;
    public static final int IBV_EVENT_WQ_FATAL = 19;

    /** {@code enum rdma_cm_event_type} of {@code <rdma/rdma_cma.h>}: an rdma_cm event's kind. */
    public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
    public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
    public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
    public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
    public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
    public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
    public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
    public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
    public static final int RDMA_CM_EVENT_REJECTED = 8;
    public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
    public static final int RDMA_CM_EVENT_DISCONNECTED = 10;
    public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
    public static final int RDMA_CM_EVENT_MULTICAST_JOIN = 12;
    public static final int RDMA_CM_EVENT_MULTICAST_ERROR = 13;
    public static final int RDMA_CM_EVENT_ADDR_CHANGE = 14;
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;

    /** {@code enum ibv_mw_type}: a memory window's type. */
    public static final int IBV_MW_TYPE_1 = 1;
    public static final int IBV_MW_TYPE_2 = 2;

    /** {@code enum ibv_odp_general_caps}. */
    public static final int IBV_ODP_SUPPORT = 1;
    public static final int IBV_ODP_SUPPORT_IMPLICIT = 1 << 1;

    /** {@code enum ibv_odp_transport_cap_bits}. */
    public static final int IBV_ODP_SUPPORT_SEND = 1;
    public static final int IBV_ODP_SUPPORT_RECV = 1 << 1;
    public static final int IBV_ODP_SUPPORT_WRITE = 1 << 2;
    public static final int IBV_ODP_SUPPORT_READ = 1 << 3;
    public static final int IBV_ODP_SUPPORT_ATOMIC = 1 << 4;
    public static final int IBV_ODP_SUPPORT_SRQ_RECV = 1 << 5;

    /** {@code ibv_advise_mr}'s advice and flag. */
    public static final int IBV_ADVISE_MR_ADVICE_PREFETCH = 0;
    public static final int IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE = 1;
    public static final int IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT = 2;
    public static final int IBV_ADVISE_MR_FLAG_FLUSH = 1;

    /** {@code enum ibv_create_cq_wc_flags}: what an extended CQ's entries carry. */
    public static final int IBV_WC_EX_WITH_BYTE_LEN = 1;
    public static final int IBV_WC_EX_WITH_IMM = 1 << 1;
    public static final int IBV_WC_EX_WITH_QP_NUM = 1 << 2;
    public static final int IBV_WC_EX_WITH_SRC_QP = 1 << 3;
    public static final int IBV_WC_EX_WITH_SLID = 1 << 4;
    public static final int IBV_WC_EX_WITH_SL = 1 << 5;
    public static final int IBV_WC_EX_WITH_DLID_PATH_BITS = 1 << 6;
    public static final int IBV_WC_EX_WITH_COMPLETION_TIMESTAMP = 1 << 7;
    public static final int IBV_WC_STANDARD_FLAGS = (1 << 7) - 1;
}
