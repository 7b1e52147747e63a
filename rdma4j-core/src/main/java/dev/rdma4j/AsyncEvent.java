package dev.rdma4j;

/**
 * An asynchronous event ({@code struct ibv_async_event} from {@code ibv_get_async_event}, already
 * acknowledged with {@code ibv_ack_async_event}), resolved to the rdma4j object it concerns.
 *
 * @param type            the event type
 * @param queuePair       the queue pair, for QP events (null otherwise, or if it was closed meanwhile)
 * @param completionQueue the completion queue, for {@code CQ_ERR}
 * @param sharedReceiveQueue the SRQ, for SRQ events
 * @param port            the port number, for port events (0 otherwise)
 * @param text            {@code ibv_event_type_str}
 */
public record AsyncEvent(AsyncEventType type, QueuePair queuePair, CompletionQueue completionQueue,
        SharedReceiveQueue sharedReceiveQueue, int port, String text) {
}
