/**
 * rdma4j's benchmarks: JMH benchmarks on the host and on the guest's device, and the counted loops
 * ({@code NettyEchoCount}) of {@code scripts/perf-compare --icount}.
 *
 * <p>Threading: each benchmark states its threads; JMH's state objects are confined as JMH confines them.
 */
package dev.rdma4j.bench;
