package dev.rdma4j.net.protocol;

/**
 * When a transport that stages its messages ({@code net.RdmaConnection}: a message copied into a send buffer waits
 * there, in order, for a data credit) has something to post: the decisions it makes after each event, so that it
 * skips looking when the event cannot have enabled a post. {@code ProtocolPropertyTest} drives these same decisions
 * between two simulated peers (order kept, no send without a receive, no deadlock).
 *
 * <p>Threading: stateless; the instances passed in are the caller's, used by one thread at a time (see the package).
 */
public final class Staging {
    private Staging() {
    }

    /**
     * After a message was put in a free buffer: whether it can go at once, without looking at the others (it is the
     * only one staged and a data credit is held); else the transport posts what the credits allow, in order.
     *
     * @param slots   the send buffers, the message's just filled
     * @param credits the connection's credits
     * @return true if the oldest staged buffer, this message's, may be posted now
     */
    public static boolean postsAtOnce(SendSlots slots, Credits credits) {
        return slots.staged() == 1 && credits.canSendData();
    }

    /**
     * After a message of the peer arrived (its credits taken into {@code credits}): whether a post may have become
     * possible. Credits came, so staged messages may go, or a credit-only message that had no credit may; no buffer
     * was freed, so nothing waiting for one can move.
     *
     * @param slots   the send buffers
     * @param credits the connection's credits, the arrival's counted
     * @return true if the transport should look for something to post
     */
    public static boolean mayPostAfterArrival(SendSlots slots, Credits credits) {
        return slots.hasStaged() || credits.creditMessageDue();
    }

    /**
     * After a receive was posted again (counted with {@link Credits#reposted}): whether a post may have become
     * possible. A grant owed changes no credit of this side: it rides on the next message unless a credit-only
     * message is due now.
     *
     * @param credits the connection's credits
     * @return true if the transport should look for something to post
     */
    public static boolean mayPostAfterRelease(Credits credits) {
        return credits.creditMessageDue();
    }
}
