/**
 * The verbs: libibverbs' objects as Java resources on the Foreign Function &amp; Memory API ({@link dev.rdma4j.Rdma}
 * lists the devices; {@link dev.rdma4j.Context}, {@link dev.rdma4j.ProtectionDomain},
 * {@link dev.rdma4j.MemoryRegion}, {@link dev.rdma4j.CompletionQueue}, {@link dev.rdma4j.QueuePair},
 * {@link dev.rdma4j.SharedReceiveQueue}, {@link dev.rdma4j.AddressHandle}), typed attributes for their C structs,
 * and the reusable request batches ({@link dev.rdma4j.SendBatch}, {@link dev.rdma4j.ReceiveBatch},
 * {@link dev.rdma4j.WorkCompletions}) of the allocation-free hot path. Every resource refuses to close while
 * another depends on it, and rdma4j owns the wr_ids the device sees.
 *
 * <p>Threading: the resources are thread-safe ({@code close()} waits for calls in progress; a queue pair
 * serialises its sends and its receives, a CQ its pollers); values, records, enums and exceptions are immutable;
 * the batches and {@link dev.rdma4j.WorkCompletions} are used by one thread at a time. Each class states its own.
 */
package dev.rdma4j;
