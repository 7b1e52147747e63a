package dev.rdma4j;

/**
 * A shared receive queue's attributes ({@code struct ibv_srq_attr}, from {@code ibv_query_srq}).
 *
 * @param maxWr    outstanding receives it holds
 * @param maxSge   scatter entries per receive
 * @param limit    the armed limit: the SRQ_LIMIT_REACHED event fires when fewer receives remain; 0 = not armed
 */
public record SrqAttributes(int maxWr, int maxSge, int limit) {
}
