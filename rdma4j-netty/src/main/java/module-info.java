/**
 * rdma4j-netty: a Netty 4.2 transport over RDMA. {@link dev.rdma4j.netty.RdmaIoHandler} makes an event loop that
 * also drives rdma4j's completion channels and rdma_cm events; {@link dev.rdma4j.netty.RdmaChannel} and
 * {@link dev.rdma4j.netty.RdmaServerChannel} carry a pipeline's bytes over RC queue pairs, so gRPC or any Netty
 * protocol runs over RDMA unchanged.
 *
 * <p>Threading: as in every Netty transport, a channel's I/O, handlers, completions and rdma_cm events run on its
 * event loop; an {@code RdmaIoHandler} belongs to one loop and is used on its thread ({@code wakeup()} from any);
 * the allocator's buffers are allocated and released on any thread.
 *
 * <p>Its API is made of Netty's and rdma4j's types (channels, allocators, options, polling modes), so the modules
 * it needs are read transitively. Netty 4.2's jars are named modules; on the class path the transport works the
 * same way.
 */
module dev.rdma4j.netty {
    requires transitive dev.rdma4j;
    requires transitive io.netty.buffer;
    requires transitive io.netty.common;
    requires transitive io.netty.transport;
    requires jdk.jfr; // the rendezvous event (NettyFlight), off unless a recording asks

    exports dev.rdma4j.netty;
}
