/**
 * Connecting queue pairs: rdma_cm ({@link dev.rdma4j.connect.CmEventChannel}, {@link dev.rdma4j.connect.CmListener},
 * {@link dev.rdma4j.connect.CmConnectionRequest}, {@link dev.rdma4j.connect.CmConnection}) and the out-of-band
 * exchange of endpoints over TCP ({@link dev.rdma4j.connect.EndpointExchange}).
 *
 * <p>Threading: rdma_cm's events, and the futures and listeners they complete, run on the engine thread of the
 * event channel's {@link dev.rdma4j.engine.CompletionEngine} and must not block; the blocking calls refuse to run
 * there. Each class states what else holds for it.
 */
package dev.rdma4j.connect;
