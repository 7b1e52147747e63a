/**
 * The completion engine: {@link dev.rdma4j.engine.CompletionEngine} drives completion queues from one thread
 * (epoll on their channels, arm then drain; or busy polling), and {@link dev.rdma4j.engine.AsyncQueuePair}
 * turns a queue pair's requests into futures, blocking calls with deadlines, or tagged requests whose completions
 * go to a {@link dev.rdma4j.engine.RequestHandler} without an object per request.
 *
 * <p>Threading: an engine owns one platform thread. Futures, handlers, listeners and tasks run there (or, for a CQ
 * a caller polls while it waits, busy or asleep on the CQ's own completion channel, on that caller's thread) and
 * must not block; the blocking calls detect an
 * engine's thread and throw {@link java.lang.IllegalStateException}. The engine and the async queue pairs are
 * thread-safe; handlers and {@link dev.rdma4j.engine.IdleStrategy} instances are called by one thread at a time.
 */
package dev.rdma4j.engine;
