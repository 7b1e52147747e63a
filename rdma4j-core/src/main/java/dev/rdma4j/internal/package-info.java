/**
 * Not API, below the verbs: the hooks the verbs call and others implement ({@code QpDriver}: the engine drives a
 * queue pair; {@code QpVerbs}: rdma_cm creates and destroys one), the marking of engine threads
 * ({@code EngineThreads}) and small shared helpers. It names no rdma4j type above {@code internal.ffi} (checked by
 * {@code ArchitectureTest}). Not exported by the module; rdma4j-bench's class-path benchmarks reach it.
 *
 * <p>Threading: stateless helpers, or state confined as each class states.
 */
package dev.rdma4j.internal;
