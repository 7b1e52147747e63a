package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;

/**
 * Describes the queue pair of an rdma_cm connection once the device is known (after address
 * resolution, or on a connection request): allocate or pick a protection domain and completion queues
 * on {@code context} and return the configured builder. rdma4j then creates the QP with
 * {@code rdma_create_qp}, and rdma_cm drives it to RTS. Runs on the engine thread.
 */
@FunctionalInterface
public interface ConnectionSetup {
    /**
     * Configures the queue pair.
     *
     * @param context the device the connection goes through (owned by the event channel)
     * @return a builder of type RC with its PD and CQs set
     * @throws VerbsException if allocating the resources fails
     */
    QueuePair.Builder configure(Context context) throws VerbsException;
}
