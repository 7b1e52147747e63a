/**
 * rdma4j: safe, asynchronous RDMA verbs (libibverbs) for Java on the Foreign Function &amp; Memory API.
 * Only the API packages are exported; the FFM bindings in {@code dev.rdma4j.internal.ffi} are not.
 */
module dev.rdma4j {
    requires jdk.jfr; // rdma4j's flight recorder events (dev.rdma4j.internal.jfr), off unless a recording asks
    exports dev.rdma4j;
    exports dev.rdma4j.connect;
    exports dev.rdma4j.engine;
    exports dev.rdma4j.net;
    exports dev.rdma4j.net.protocol;
    exports dev.rdma4j.internal.jfr to jdk.jfr;
}
