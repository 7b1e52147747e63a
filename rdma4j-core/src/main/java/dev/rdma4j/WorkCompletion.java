package dev.rdma4j;

/**
 * An immutable copy of one work completion ({@code struct ibv_wc}); {@link WorkCompletions} reads the
 * same fields in place without allocating.
 *
 * @param wrId            the caller's wr_id of the request (0 for a request of an {@code AsyncQueuePair},
 *                        which takes none)
 * @param status          success or the typed failure
 * @param opcode          what completed ({@code ibv_wc.opcode}); undefined in C for a failed completion, where
 *                        rdma4j gives {@link WcOpcode#RECV} for a receive (see {@link WorkCompletions#opcode(int)})
 * @param byteLength      bytes received (receives) or read/fetched
 * @param immediateData   the immediate data in host order, valid when {@code hasImmediate}
 * @param hasImmediate    {@code IBV_WC_WITH_IMM}
 * @param qpNumber        the local queue pair
 * @param sourceQp        the sender's QP number (UD receives)
 * @param flags           {@code wc_flags}
 * @param pkeyIndex       {@code pkey_index}
 * @param slid            the sender's LID (InfiniBand UD)
 * @param serviceLevel    {@code sl}
 * @param vendorError     {@code vendor_err}
 * @param buffer          for a successful receive, the received bytes in the posted buffer (a view); else null
 * @param isReceive       whether the request was a receive (of a queue pair's receive queue or of a shared
 *                        receive queue), failed ones included: known from rdma4j's own wr_id, not from the
 *                        opcode
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediateData,
        boolean hasImmediate, int qpNumber, int sourceQp, int flags, int pkeyIndex, int slid, int serviceLevel,
        int vendorError, java.lang.foreign.MemorySegment buffer, boolean isReceive) {

    /**
     * A copy whose direction is taken from {@code opcode} (right for successful completions only: the C opcode of a
     * failed one is undefined). Kept for code written before {@code isReceive} was a component.
     *
     * @param wrId          the caller's wr_id
     * @param status        the status
     * @param opcode        the opcode
     * @param byteLength    {@code byte_len}
     * @param immediateData {@code imm_data} in host order
     * @param hasImmediate  {@code IBV_WC_WITH_IMM}
     * @param qpNumber      {@code qp_num}
     * @param sourceQp      {@code src_qp}
     * @param flags         {@code wc_flags}
     * @param pkeyIndex     {@code pkey_index}
     * @param slid          {@code slid}
     * @param serviceLevel  {@code sl}
     * @param vendorError   {@code vendor_err}
     * @param buffer        the received bytes, or null
     */
    public WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediateData,
            boolean hasImmediate, int qpNumber, int sourceQp, int flags, int pkeyIndex, int slid, int serviceLevel,
            int vendorError, java.lang.foreign.MemorySegment buffer) {
        this(wrId, status, opcode, byteLength, immediateData, hasImmediate, qpNumber, sourceQp, flags, pkeyIndex, slid,
                serviceLevel, vendorError, buffer, opcode.isReceive());
    }

    /**
     * The key a peer's send with invalidate ({@code IBV_WR_SEND_WITH_INV}) invalidated on this side
     * ({@code invalidated_rkey}, which shares {@code imm_data}'s place in {@code struct ibv_wc}). rxe sets the kernel's
     * flag bit for it ({@code 1 << 2}, which verbs.h names {@code IBV_WC_IP_CSUM_OK}) instead of
     * {@code IBV_WC_WITH_INV}, so on rxe this is 0 and the key is {@code Integer.reverseBytes(immediateData())}.
     *
     * @return the rkey, or 0 when the completion's flags have no {@code IBV_WC_WITH_INV}
     */
    public int invalidatedRkey() {
        return (flags & WorkCompletions.FLAG_WITH_INV) != 0 ? Integer.reverseBytes(immediateData) : 0;
    }

    /**
     * Whether the request succeeded.
     *
     * @return {@code status == SUCCESS}
     */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }
}
