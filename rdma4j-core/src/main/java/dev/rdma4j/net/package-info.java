/**
 * The short path for the common case: reliable connections (RC) with their buffers, in a few lines.
 *
 * <p>{@link dev.rdma4j.net.RdmaServer#listen} and {@link dev.rdma4j.net.RdmaClient#connect} give an
 * {@link dev.rdma4j.net.RdmaConnection} whose receive buffers are registered and posted before the peer can
 * send, with {@code send}/{@code receive} of messages, {@code write}/{@code read} to the region the peer
 * exposed (its address and rkey travel in the connection's set-up), futures beside blocking calls with
 * {@link java.time.Duration} deadlines, and {@link AutoCloseable} in the natural try-with-resources order.
 * Connections are set up over rdma_cm ({@code rdma_connect}/{@code rdma_accept}) or, with
 * {@link dev.rdma4j.net.RdmaOptions.Exchange#TCP}, by exchanging endpoints over a TCP socket. Everything
 * underneath stays reachable: {@link dev.rdma4j.net.RdmaConnection#queuePair()},
 * {@link dev.rdma4j.net.RdmaConnection#asyncQueuePair()}, {@link dev.rdma4j.net.RdmaConnection#protectionDomain()}.
 *
 * <p>Threading: servers and connections are thread-safe; their futures complete on the engine thread (or on a
 * busy-polling caller's), where continuations must not block, and the blocking calls and {@code close()} refuse to
 * run there. Options and the client are immutable; a {@link dev.rdma4j.net.Message} is closed once, from any thread.
 */
package dev.rdma4j.net;
