/**
 * {@code bin/rdma4j ucmatose}: rdma-core's {@code ucmatose} ({@code librdmacm/examples/cmatose.c}, rdma-core 44) on
 * rdma4j, with its flags, its order of posting receives, sends, polling and disconnecting, and its lines on stdout
 * and exit statuses, interoperable with the C tool in both roles.
 *
 * <p>Threading: a run is single-threaded like the C tool. The calling thread handles the rdma_cm events one at a
 * time, in the order they arrive ({@code rdma_get_cm_event} in C): rdma4j reads them on its
 * {@link dev.rdma4j.engine.CompletionEngine}'s thread, which hands what they mean (a connection request, a
 * connection established, failed or disconnected) to the calling thread through a queue. The calling thread also
 * posts the sends and waits for the completions, on completion queues of its own (no engine drives them). The one
 * thing done on the engine thread is the client's per-connection set-up, which rdma4j runs at
 * {@code RDMA_CM_EVENT_ROUTE_RESOLVED} as the C client's {@code route_handler} does: the PD, the CQs, the QP, the
 * message buffer and the receives; what it would print is handed to the calling thread with its failure.
 */
package dev.rdma4j.tools.cmatose;
