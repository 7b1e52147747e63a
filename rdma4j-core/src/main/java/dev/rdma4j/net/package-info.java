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
 * <p>A server may share one receive queue among its connections
 * ({@link dev.rdma4j.net.RdmaOptions.Builder#sharedReceiveQueue}, {@code ibv_create_srq}): the server owns it, posting,
 * reposting and re-arming its limit itself, and shows its state in
 * {@link dev.rdma4j.net.RdmaServer#sharedReceiveStats()}. A receive queue whose buffers are all lent to messages not
 * yet closed has none posted: it is logged once per episode (a WARNING, at most every 10 s, on the
 * {@code dev.rdma4j.net} {@link java.lang.System.Logger}), a shared queue's clients retrying receiver-not-ready
 * meanwhile, a connection's peer waiting for credits. How the threads wait is chosen in the options:
 * {@link dev.rdma4j.net.RdmaOptions.Builder#pollingMode} for the engine's thread (event, busy-polling or adaptive),
 * {@link dev.rdma4j.net.RdmaOptions.Builder#busyPoll} for the application's threads in blocking calls.
 *
 * <p>Threading: servers and connections are thread-safe; their futures complete on the engine thread (or on a
 * busy-polling caller's), where continuations must not block, and the blocking calls and {@code close()} refuse to
 * run there. Options and the client are immutable; a {@link dev.rdma4j.net.Message} is closed once, from any thread.
 */
package dev.rdma4j.net;
