/**
 * Drop-ins for rdmacm-utils' datagram tools (rdma-core 44): {@code rdma4j udaddy} (UD over rdma_cm: a peer resolved
 * by SIDR) and {@code rdma4j mckey} (multicast over rdma_cm), with the C tools' flags, lines and exit statuses, on
 * rdma4j's {@link dev.rdma4j.connect.CmDatagram}.
 *
 * <p>Threading: a run is single-threaded except for rdma_cm's events, which an engine thread handles; the tool
 * waits for their futures and polls its completion queues itself, as the C tools do.
 */
package dev.rdma4j.tools.datagram;
