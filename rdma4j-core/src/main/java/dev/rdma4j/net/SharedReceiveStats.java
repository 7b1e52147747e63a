package dev.rdma4j.net;

/**
 * A snapshot of an {@link RdmaServer}'s shared receive queue on one device ({@code ibv_create_srq}, its buffers
 * posted with {@code ibv_post_srq_recv}, its limit event {@code IBV_EVENT_SRQ_LIMIT_REACHED}): made by
 * {@link RdmaServer#sharedReceiveStats()}. The server owns the SRQ: it posts every buffer, reposts each as its
 * message closes, and alone arms and re-arms the limit (at a quarter of the buffers); these numbers are how to watch
 * it, without touching the SRQ. Each field is read on its own, so a snapshot taken while messages flow need not add
 * up exactly ({@code posted + lent} is at most {@code buffers}; the rest are receives the device consumed whose
 * completions are not yet dispatched, or control messages on their way back).
 *
 * <p>Thread-safe (immutable).
 *
 * @param device       the RDMA device's name
 * @param buffers      the buffers of the SRQ ({@link RdmaOptions#receiveBuffers()}, or fewer if the device holds
 *                     fewer)
 * @param posted       buffers posted now, as rdma4j counts them (a receive the device consumed counts until its
 *                     completion is polled)
 * @param lent         buffers lent to received messages not yet closed (taken by the application or waiting in a
 *                     connection for it)
 * @param limitEvents  SRQ_LIMIT_REACHED events handled: times fewer than a quarter of the buffers were posted
 * @param limitReposts buffers the limit events posted (released buffers whose repost had failed; normally 0)
 * @param dryEpisodes  times every buffer was lent at once: the SRQ had none posted, and the clients' sends were
 *                     refused (RNR) and retried until a message closed (each logged once on the
 *                     {@code dev.rdma4j.net} logger: a WARNING, or DEBUG within 10 seconds of the last WARNING)
 * @param dry          whether every buffer is lent now
 */
public record SharedReceiveStats(String device, int buffers, int posted, int lent, long limitEvents,
        long limitReposts, long dryEpisodes, boolean dry) {
}
