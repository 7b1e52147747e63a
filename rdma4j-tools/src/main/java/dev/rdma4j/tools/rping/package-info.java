/**
 * {@code bin/rdma4j rping}: rdma-core's {@code rping} over rdma_cm, with its flags, its exchange of buffer
 * descriptors and its ping pattern, interoperable with the C tool in both roles.
 *
 * <p>Threading: a session runs on the calling thread; rdma_cm events arrive on its engine's thread and are handed
 * to it through futures.
 */
package dev.rdma4j.tools.rping;
