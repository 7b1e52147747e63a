package dev.rdma4j;

/**
 * An immutable copy of one work completion ({@code struct ibv_wc}); {@link WorkCompletions} reads the
 * same fields in place without allocating.
 *
 * @param wrId            the caller's wr_id of the request
 * @param status          success or the typed failure
 * @param opcode          what completed (valid for successful completions)
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
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediateData,
        boolean hasImmediate, int qpNumber, int sourceQp, int flags, int pkeyIndex, int slid, int serviceLevel,
        int vendorError, java.lang.foreign.MemorySegment buffer) {

    /**
     * Whether the request succeeded.
     *
     * @return {@code status == SUCCESS}
     */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }
}
