package dev.rdma4j.net;

/**
 * A snapshot of an {@link RdmaConnection}'s counters since it was made ({@link RdmaConnection#counters()}). The short
 * path copies every message into a registered send buffer (it has no zero-copy or rendezvous sends: those are
 * rdma4j-netty's), so every message and byte sent here was copied once.
 *
 * <p>Threading: immutable. The counts are kept where the work happens (the send side under its lock, the receive
 * side where completions are dispatched), at the cost of a field increment each.
 *
 * @param messagesSent        messages copied into a send buffer to be posted ({@code ibv_post_send}, SEND WITH
 *                            IMMEDIATE), whether acknowledged yet or not
 * @param bytesSent           their bytes
 * @param sendsWaited         sends that found every send buffer taken and waited for one (a copy on the heap meanwhile)
 * @param creditStalls        times messages began to wait in their send buffers for the peer to grant receives
 *                            (flow control: the peer's application was slower to give messages back than this side
 *                            sent them)
 * @param messagesReceived    data messages received and handed to the application
 * @param bytesReceived       their bytes
 * @param receiveBuffersLent  receive buffers held now by messages the application has not closed (at most
 *                            {@link RdmaOptions#receiveBuffers()} with a receive queue of its own; while all are
 *                            lent, the peer waits for credits)
 */
public record ConnectionCounters(long messagesSent, long bytesSent, long sendsWaited, long creditStalls,
        long messagesReceived, long bytesReceived, int receiveBuffersLent) {
}
