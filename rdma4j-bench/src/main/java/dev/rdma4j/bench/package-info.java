/**
 * rdma4j's benchmarks: JMH benchmarks on the host and on the guest's device, and the counted loops
 * ({@code NettyEchoCount}) of {@code scripts/perf-compare --icount}. No benchmark is in a package of rdma4j-core
 * ({@code NoSplitPackageTest}): the core's package-private members that some measure or set up with are reached
 * through {@link dev.rdma4j.bench.Internals} alone, on the class path.
 *
 * <p>Threading: each benchmark states its threads; JMH's state objects are confined as JMH confines them.
 */
package dev.rdma4j.bench;
