package dev.rdma4j;

/**
 * Queue sizes of a queue pair ({@code struct ibv_qp_cap}): asked for when building it, and as the
 * device actually granted them ({@link QueuePair#capabilities()}).
 *
 * @param maxSendWr     outstanding send requests
 * @param maxRecvWr     outstanding receive requests
 * @param maxSendSge    scatter/gather entries per send request
 * @param maxRecvSge    scatter/gather entries per receive request
 * @param maxInlineData bytes a send may carry inline
 */
public record QpCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
}
