package dev.rdma4j.internal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * How a queue pair is made and destroyed: {@code ibv_create_qp}/{@code ibv_destroy_qp}, or on an rdma_cm id
 * {@code rdma_create_qp}/{@code rdma_destroy_qp} ({@code dev.rdma4j.connect} supplies that one).
 *
 * <p>Threading: called by the queue pair's build and close, on their threads.
 */
public interface QpVerbs {
    /**
     * Creates the native QP.
     *
     * @param pd       the {@code struct ibv_pd *}
     * @param initAttr a filled {@code struct ibv_qp_init_attr}; the verb writes the granted capacities back
     * @return the {@code struct ibv_qp *}
     * @throws IOException the binding's failure or the API's {@code VerbsException}
     */
    MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws IOException;

    /**
     * Destroys the native QP.
     *
     * @param qp the {@code struct ibv_qp *}
     * @throws IOException the binding's failure or the API's {@code VerbsException}
     */
    void destroy(MemorySegment qp) throws IOException;
}
