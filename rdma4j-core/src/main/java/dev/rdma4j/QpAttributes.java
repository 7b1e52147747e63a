package dev.rdma4j;

/**
 * A queue pair's current attributes ({@code ibv_query_qp}).
 *
 * @param state           {@code qp_state}
 * @param pathMtu         {@code path_mtu}
 * @param qkey            {@code qkey} (UD)
 * @param rqPsn           {@code rq_psn}
 * @param sqPsn           {@code sq_psn}
 * @param destQpNumber    {@code dest_qp_num}
 * @param accessMask      {@code qp_access_flags} ({@link AccessFlag} bits)
 * @param capabilities    {@code cap}
 * @param port            {@code port_num}
 * @param pkeyIndex       {@code pkey_index}
 * @param maxRdAtomic     {@code max_rd_atomic}
 * @param maxDestRdAtomic {@code max_dest_rd_atomic}
 * @param minRnrTimer     {@code min_rnr_timer}
 * @param timeout         {@code timeout}
 * @param retryCount      {@code retry_cnt}
 * @param rnrRetry        {@code rnr_retry}
 * @param global          {@code ah_attr.is_global}
 * @param destGid         {@code ah_attr.grh.dgid}
 * @param sgidIndex       {@code ah_attr.grh.sgid_index}
 * @param hopLimit        {@code ah_attr.grh.hop_limit}
 * @param dlid            {@code ah_attr.dlid}
 */
public record QpAttributes(QpState state, Mtu pathMtu, int qkey, int rqPsn, int sqPsn, int destQpNumber,
        int accessMask, QpCapabilities capabilities, int port, int pkeyIndex, int maxRdAtomic, int maxDestRdAtomic,
        int minRnrTimer, int timeout, int retryCount, int rnrRetry, boolean global, Gid destGid, int sgidIndex,
        int hopLimit, int dlid) {

    /** The attributes {@code ibv_query_qp} wrote, as the binding read them ({@code QpAttrs.queried}'s order). */
    static QpAttributes of(long[] v, byte[] destGid) {
        QpCapabilities caps = new QpCapabilities((int) v[7], (int) v[8], (int) v[9], (int) v[10], (int) v[11]);
        return new QpAttributes(QpState.of((int) v[0]), Mtu.of((int) v[1]), (int) v[2], (int) v[3], (int) v[4],
                (int) v[5], (int) v[6], caps, (int) v[12], (int) v[13], (int) v[14], (int) v[15], (int) v[16],
                (int) v[17], (int) v[18], (int) v[19], v[20] != 0, Gid.of(destGid), (int) v[21], (int) v[22],
                (int) v[23]);
    }
}
