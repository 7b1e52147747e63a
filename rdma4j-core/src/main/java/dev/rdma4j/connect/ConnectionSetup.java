package dev.rdma4j.connect;

import dev.rdma4j.Context;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.VerbsException;

/**
 * Describes the queue pair of an rdma_cm connection once the device is known (after address
 * resolution, or on a connection request): allocate or pick a protection domain and completion queues
 * on {@code context} and return the configured builder. rdma4j then creates the QP with
 * {@code rdma_create_qp} (which moves it to INIT), calls {@link #beforeConnect}, and then
 * {@code rdma_connect} or {@code rdma_accept}; rdma_cm drives it to RTS.
 *
 * <p>Threading: on the active side ({@link CmConnection#connectAsync}) both methods run on the engine thread,
 * so they must not block on the engine (e.g. wait for a completion); on the passive side
 * ({@link CmConnectionRequest#acceptAsync}) they run on the thread that calls {@code acceptAsync}.
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
    QueuePairBuilder configure(Context context) throws VerbsException;

    /**
     * Runs after {@code rdma_create_qp} and before {@code rdma_connect}/{@code rdma_accept}, with the queue
     * pair in INIT: post the receives the peer's first messages need here, as C programs do, or an eager
     * peer meets RNR. Does nothing by default; see {@link #withBeforeConnect}. If it throws, the connection
     * attempt fails with that exception and its queue pair is closed.
     *
     * @param queuePair the new queue pair (in INIT)
     * @throws VerbsException if posting fails
     */
    default void beforeConnect(QueuePair queuePair) throws VerbsException {
    }

    /**
     * The private data of {@code rdma_connect} when it depends on what {@link #configure} made, e.g. the
     * address and rkey of a region registered there (in C: register after {@code rdma_resolve_route},
     * then {@code rdma_connect} with them). Active side only: called on the engine thread after
     * {@link #beforeConnect}, just before {@code rdma_connect}; at most 56 bytes (52 keep their length at an
     * rdma4j peer). The passive side needs no such hook: {@link CmConnectionRequest#context()} is known
     * before {@link CmConnectionRequest#acceptAsync} takes its private data.
     *
     * @param queuePair the new queue pair (in INIT)
     * @return the bytes to send instead of those given to {@link CmConnection#connectAsync}; {@code null} (the
     *         default) to send those
     * @throws VerbsException if reading what to send fails
     */
    default byte[] connectPrivateData(QueuePair queuePair) throws VerbsException {
        return null;
    }

    /**
     * How often the queue pair's requests are retransmitted before they fail with {@code RETRY_EXC_ERR}: the
     * {@code retry_count} of {@code rdma_conn_param} given to {@code rdma_connect}/{@code rdma_accept} (0 to 7). The
     * default is 7, rdma-core's tools' choice; but Soft-RoCE (rxe) retries a count of 7 for ever, so a connection whose
     * peer host or link is gone never fails there: 6 or less makes it fail after that many ACK timeouts.
     *
     * @return the count, 0 to 7
     */
    default int retryCount() {
        return 7;
    }

    /**
     * How often the peer retries a send that finds no receive posted on this side (a receiver-not-ready NAK) before
     * it fails with {@code RNR_RETRY_EXC_ERR}: the {@code rnr_retry_count} of {@code rdma_conn_param} given to
     * {@code rdma_connect}/{@code rdma_accept} (0 to 7), which rdma_cm sets on the peer's queue pair. The default is
     * 7, which retries for ever; a side that never lets the peer send without a posted receive (credits) asks for
     * less, so that a bug shows as a failure rather than a hang.
     *
     * @return the count, 0 to 7 (7: for ever)
     */
    default int rnrRetryCount() {
        return 7;
    }

    /**
     * RDMA READs and atomics that may be in flight each way: the {@code initiator_depth} and
     * {@code responder_resources} of {@code rdma_conn_param} given to {@code rdma_connect}/{@code rdma_accept}
     * (0 to 255; both sides should ask for the same). The connection asks for at most what the device allows
     * ({@code max_qp_init_rd_atom}, {@code max_qp_rd_atom}). The default is 1, rdma-core's tools' choice; a queue pair
     * with more reads posted than this waits (its send queue stalls) rather than fails.
     *
     * @return the depth, 0 to 255
     */
    default int readDepth() {
        return 1;
    }

    /**
     * This setup with {@code hook} as its {@link #beforeConnect} (replacing this one's; its
     * {@link #connectPrivateData} is kept).
     *
     * @param hook e.g. {@code qp -> qp.postReceive(1, region, 0, 4096)}
     * @return a new setup
     */
    default ConnectionSetup withBeforeConnect(BeforeConnect hook) {
        java.util.Objects.requireNonNull(hook, "hook");
        ConnectionSetup self = this;
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context context) throws VerbsException {
                return self.configure(context);
            }

            @Override
            public void beforeConnect(QueuePair queuePair) throws VerbsException {
                hook.prepare(queuePair);
            }

            @Override
            public byte[] connectPrivateData(QueuePair queuePair) throws VerbsException {
                return self.connectPrivateData(queuePair);
            }

            @Override
            public int retryCount() {
                return self.retryCount();
            }

            @Override
            public int rnrRetryCount() {
                return self.rnrRetryCount();
            }

            @Override
            public int readDepth() {
                return self.readDepth();
            }
        };
    }

    /** What {@link #beforeConnect} does, as a lambda: see {@link #withBeforeConnect}. */
    @FunctionalInterface
    interface BeforeConnect {
        /**
         * Prepares the queue pair before the connection is requested or accepted.
         *
         * @param queuePair the new queue pair (in INIT)
         * @throws VerbsException if posting fails
         */
        void prepare(QueuePair queuePair) throws VerbsException;
    }
}
