/**
 * Not API: the bridge between the verbs package and the engine ({@code Access}), the marking of engine threads
 * ({@code EngineThreads}) and small shared helpers. Not exported by the module: rdma4j's API packages use it,
 * and rdma4j-bench's class-path benchmarks reach it to compare the layers.
 *
 * <p>Threading: stateless helpers, or state confined as each class states.
 */
package dev.rdma4j.internal;
