/**
 * The wire protocol shared by the short path ({@code dev.rdma4j.net}'s {@code RdmaConnection}) and rdma4j-netty's
 * channel: plain bookkeeping classes that make no native call, so the protocol is tested on the host without a
 * device (two simulated peers wired together in memory).
 *
 * <ul>
 *   <li>{@link dev.rdma4j.net.protocol.Immediate}: the 32-bit word every message carries (as its immediate data):
 *       data credits, control credits, rendezvous reads done, and the marks (rendezvous, control, close, end of
 *       stream).</li>
 *   <li>{@link dev.rdma4j.net.protocol.Credits}: credit-based flow control. A side sends a data message only on a
 *       data credit (a receive the peer posted and granted), and a credit-only message only on a control credit
 *       (one of {@link dev.rdma4j.net.protocol.Credits#CONTROL_RECEIVES} receives each side keeps for them), so it
 *       never sends when the peer has no receive posted: no receiver-not-ready (RNR) NAK in normal operation.</li>
 *   <li>{@link dev.rdma4j.net.protocol.SendSlots}: the ring of registered send buffers: filled in call order,
 *       posted in that order as credits allow, reclaimed as their sends complete (in any order).</li>
 *   <li>{@link dev.rdma4j.net.protocol.Staging}: when a transport that stages messages in its send buffers has
 *       something to post after an event (so it skips looking when nothing can have changed).</li>
 *   <li>{@link dev.rdma4j.net.protocol.Rendezvous}: the read rendezvous of large writes (rdma4j-netty): what this
 *       side announced and the peer has not yet read, and what the peer announced, read in announcement order.</li>
 * </ul>
 *
 * <p>Threading: none of these classes is thread-safe. Each instance belongs to one connection or channel and is used
 * by one thread at a time: rdma4j-netty's event loop, or {@code RdmaConnection} under its send lock. Nothing here
 * allocates on the message path (the rendezvous queues grow once, to their bound).
 */
package dev.rdma4j.net.protocol;
