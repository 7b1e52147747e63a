/**
 * A Netty 4.2 transport over RDMA: {@link dev.rdma4j.netty.RdmaIoHandler} makes an event loop whose
 * {@code epoll_wait} also drives rdma4j's completion channels and rdma_cm events,
 * {@link dev.rdma4j.netty.RdmaChannel} and {@link dev.rdma4j.netty.RdmaServerChannel} carry a pipeline's bytes
 * over RC queue pairs (credits, packed sends, RDMA reads for large writes), so gRPC or any Netty protocol runs
 * over RDMA unchanged.
 *
 * <p>Threading: as in every Netty transport, a channel's I/O, handlers, completions and rdma_cm events run on its
 * event loop; an {@code RdmaIoHandler} belongs to one loop and is used on its thread ({@code wakeup()} from any);
 * the allocator's buffers are allocated and released on any thread.
 */
package dev.rdma4j.netty;
