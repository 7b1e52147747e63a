package dev.rdma4j.engine;

import dev.rdma4j.AddressHandle;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The blocking view of an {@link AsyncQueuePair} ({@link AsyncQueuePair#blocking()},
 * {@link AsyncQueuePair#blocking(Duration)}): each operation posts its request as the {@code ...Async} form does,
 * but waits for queue room instead of failing with {@code ENOMEM}, then parks the caller (virtual threads welcome)
 * until the request completes, and returns its {@link WorkCompletion}. One mechanism for every operation: the
 * view's timeout bounds the wait for room and for the completion together; at the deadline the call throws
 * {@link WorkRequestTimeoutException} (the request, if posted, stays posted: its room comes back when it
 * completes). A failed request throws its {@link WorkRequestException} (the typed status), a refused post its
 * {@link VerbsException}; an offset or a length outside its region is an {@link IllegalArgumentException}.
 *
 * <p>Threading: thread-safe, immutable; a view costs nothing to make (one per timeout is fine). No call may run
 * on the engine's thread (a completion's continuation, a listener), where it would wait for itself: it throws
 * {@link IllegalStateException} there.
 */
public final class BlockingQueuePair {
    private final AsyncQueuePair pair;
    private final Duration timeout;
    /** The timeout in nanoseconds; {@code Long.MAX_VALUE}: no deadline. */
    private final long budget;

    /** The timeout of the view without a deadline. */
    private static final Duration NO_DEADLINE = Duration.ofSeconds(Long.MAX_VALUE);

    private BlockingQueuePair(AsyncQueuePair pair, Duration timeout, long budget) {
        this.pair = pair;
        this.timeout = timeout;
        this.budget = budget;
    }

    /** {@link AsyncQueuePair#blocking(Duration)}: with {@code timeout}, or without a deadline when null. */
    static BlockingQueuePair of(AsyncQueuePair pair, Duration timeout) {
        if (timeout == null) {
            return new BlockingQueuePair(pair, NO_DEADLINE, Long.MAX_VALUE);
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("a timeout must not be negative: " + timeout);
        }
        return new BlockingQueuePair(pair, timeout, dev.rdma4j.internal.Timeouts.nanos(timeout));
    }

    /**
     * The queue pair this view posts on.
     *
     * @return the asynchronous wrapper
     */
    public AsyncQueuePair pair() {
        return pair;
    }

    /**
     * How long each call waits at most, for queue room and for the completion together.
     *
     * @return the timeout, or empty for no deadline
     */
    public java.util.Optional<Duration> timeout() {
        return budget == Long.MAX_VALUE ? java.util.Optional.empty() : java.util.Optional.of(timeout);
    }

    /**
     * Blocking {@link AsyncQueuePair#postAsync(SendBatch)}: posts the chain ({@code ibv_post_send}) and waits
     * until its last request completes.
     *
     * @param batch the chain
     * @return the last request's completion
     * @throws IOException          {@link WorkRequestException}, {@link WorkRequestTimeoutException} at the deadline,
     *                              or {@link VerbsException}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion post(SendBatch batch) throws IOException, InterruptedException {
        long start = System.nanoTime();
        return await("chain of " + batch.count() + " send requests", start, pair.postChain(batch, budget));
    }

    /**
     * Blocking {@link AsyncQueuePair#sendAsync} ({@code IBV_WR_SEND}).
     *
     * @param region source
     * @param offset offset in it
     * @param length bytes
     * @return the completion
     * @throws IOException          {@link WorkRequestException}, {@link WorkRequestTimeoutException} at the deadline,
     *                              or {@link VerbsException}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion send(MemoryRegion region, long offset, int length) throws IOException, InterruptedException {
        return awaitSend("send", new RequestEncoder.Send(region, offset, length));
    }

    /**
     * Blocking {@link AsyncQueuePair#sendWithImmediateAsync} ({@code IBV_WR_SEND_WITH_IMM}).
     *
     * @param region    source
     * @param offset    offset in it
     * @param length    bytes
     * @param immediate 32 bits for the peer's completion
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion sendWithImmediate(MemoryRegion region, long offset, int length, int immediate)
            throws IOException, InterruptedException {
        return awaitSend("send with immediate", (b, id) -> b.sendWithImmediate(id, region, offset, length,
                immediate));
    }

    /**
     * Blocking {@link AsyncQueuePair#sendToAsync} (a UD send, {@code IBV_WR_SEND} with an address handle).
     *
     * @param region     source
     * @param offset     offset in it
     * @param length     bytes
     * @param ah         the route to the destination
     * @param remoteQpn  the destination QP
     * @param remoteQkey the destination's Q_Key
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion sendTo(MemoryRegion region, long offset, int length, AddressHandle ah, int remoteQpn,
            int remoteQkey) throws IOException, InterruptedException {
        return awaitSend("UD send", (b, id) -> b.sendTo(id, region, offset, length, ah, remoteQpn, remoteQkey));
    }

    /**
     * Blocking {@link AsyncQueuePair#writeAsync} ({@code IBV_WR_RDMA_WRITE}).
     *
     * @param region       source
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion write(MemoryRegion region, long offset, int length, RemoteRegion remote, long remoteOffset)
            throws IOException, InterruptedException {
        return awaitSend("RDMA write", (b, id) -> b.write(id, region, offset, length, remote, remoteOffset));
    }

    /**
     * Blocking {@link AsyncQueuePair#writeWithImmediateAsync} ({@code IBV_WR_RDMA_WRITE_WITH_IMM}).
     *
     * @param region       source
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @param immediate    32 bits for the peer's receive completion
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion writeWithImmediate(MemoryRegion region, long offset, int length, RemoteRegion remote,
            long remoteOffset, int immediate) throws IOException, InterruptedException {
        return awaitSend("RDMA write with immediate", (b, id) -> b.writeWithImmediate(id, region, offset, length,
                remote, remoteOffset, immediate));
    }

    /**
     * Blocking {@link AsyncQueuePair#readAsync} ({@code IBV_WR_RDMA_READ}).
     *
     * @param region       destination
     * @param offset       offset in it
     * @param length       bytes
     * @param remote       the peer's region
     * @param remoteOffset offset in it
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion read(MemoryRegion region, long offset, int length, RemoteRegion remote, long remoteOffset)
            throws IOException, InterruptedException {
        return awaitSend("RDMA read", (b, id) -> b.read(id, region, offset, length, remote, remoteOffset));
    }

    /**
     * Blocking {@link AsyncQueuePair#fetchAndAddAsync} ({@code IBV_WR_ATOMIC_FETCH_AND_ADD}).
     *
     * @param region       where the old value lands (8 bytes)
     * @param offset       offset in it
     * @param remote       the peer's region
     * @param remoteOffset offset in it (8-byte aligned)
     * @param add          the addend
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion fetchAndAdd(MemoryRegion region, long offset, RemoteRegion remote, long remoteOffset,
            long add) throws IOException, InterruptedException {
        return awaitSend("fetch-and-add", (b, id) -> b.fetchAndAdd(id, region, offset, remote, remoteOffset, add));
    }

    /**
     * Blocking {@link AsyncQueuePair#compareAndSwapAsync} ({@code IBV_WR_ATOMIC_CMP_AND_SWP}).
     *
     * @param region       where the old value lands (8 bytes)
     * @param offset       offset in it
     * @param remote       the peer's region
     * @param remoteOffset offset in it (8-byte aligned)
     * @param compare      the expected value
     * @param swap         the new value
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion compareAndSwap(MemoryRegion region, long offset, RemoteRegion remote, long remoteOffset,
            long compare, long swap) throws IOException, InterruptedException {
        return awaitSend("compare-and-swap", (b, id) -> b.compareAndSwap(id, region, offset, remote, remoteOffset,
                compare, swap));
    }

    /**
     * Blocking {@link AsyncQueuePair#receiveAsync} ({@code ibv_post_recv}): posts a receive and waits for a
     * message.
     *
     * @param region destination
     * @param offset offset in it
     * @param length bytes
     * @return the completion
     * @throws IOException          as {@link #send}
     * @throws InterruptedException if interrupted while waiting
     */
    public WorkCompletion receive(MemoryRegion region, long offset, int length)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        return await("receive", start, pair.postReceive(budget, region, offset, length));
    }

    private WorkCompletion awaitSend(String what, RequestEncoder encoder)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        return await(what, start, pair.postSend(what, budget, encoder));
    }

    private WorkCompletion await(String what, long start, CompletableFuture<WorkCompletion> f)
            throws IOException, InterruptedException {
        try {
            if (budget == Long.MAX_VALUE) {
                return f.get();
            }
            return f.get(Math.max(0, budget - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new WorkRequestTimeoutException(what, timeout, true);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RoomTimeout) {
                throw new WorkRequestTimeoutException(what, timeout, false);
            }
            if (c instanceof InterruptedException ie) {
                throw ie;
            }
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(c);
        }
    }

    /** No queue room came before the deadline (internal marker, turned into the caller's exception). */
    static final class RoomTimeout extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RoomTimeout() {
            super(null, null, false, false);
        }
    }
}
