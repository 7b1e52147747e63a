package dev.rdma4j.engine;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.WcOpcode;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;

/**
 * The completion a {@link CompletionHandler} is given: the {@code struct ibv_wc} that {@code ibv_poll_cq} wrote,
 * read in place. One view per engine, reused for every completion it dispatches, so dispatch allocates nothing;
 * it is valid only during the handler's call, and any use after it returns throws
 * {@link IllegalStateException}. Keep {@link #toCompletion()} (an immutable copy, which allocates) to use one later.
 *
 * <p>Threading: not thread-safe; used on the engine thread, inside the handler's call, only (another thread's
 * use throws {@link IllegalStateException} too).
 */
public final class CompletionView {
    private final Thread engineThread;
    private WorkCompletions batch;
    private int index;

    CompletionView(Thread engineThread) {
        this.engineThread = engineThread;
    }

    /** Points the view at completion {@code i} of {@code wcs} for one handler call. */
    void at(WorkCompletions wcs, int i) {
        batch = wcs;
        index = i;
    }

    /** Ends the handler's call: the view refuses use until the next. */
    void release() {
        batch = null;
    }

    private WorkCompletions batch() {
        if (Thread.currentThread() != engineThread) {
            throw new IllegalStateException("a CompletionView is used on its engine thread " + engineThread.getName()
                    + ", during its CompletionHandler's call, only: keep toCompletion() to use a completion elsewhere");
        }
        WorkCompletions b = batch;
        if (b == null) {
            throw new IllegalStateException("a CompletionView is valid only during its CompletionHandler's call: "
                    + "keep toCompletion() to use a completion later");
        }
        return b;
    }

    /**
     * The caller's wr_id ({@code ibv_wc.wr_id} as given when posting).
     *
     * @return the wr_id
     */
    public long wrId() {
        return batch().wrId(index);
    }

    /**
     * The status ({@code ibv_wc.status}).
     *
     * @return the status
     */
    public WcStatus status() {
        return batch().status(index);
    }

    /**
     * Whether it succeeded ({@code IBV_WC_SUCCESS}).
     *
     * @return {@code true} on success
     */
    public boolean isSuccess() {
        return batch().isSuccess(index);
    }

    /**
     * Whether it completes a receive; see {@link WorkCompletions#isReceive(int)}.
     *
     * @return {@code true} for receives
     */
    public boolean isReceive() {
        return batch().isReceive(index);
    }

    /**
     * The opcode ({@code ibv_wc.opcode}); see {@link WorkCompletions#opcode(int)} for failed completions.
     *
     * @return the opcode
     */
    public WcOpcode opcode() {
        return batch().opcode(index);
    }

    /**
     * {@code ibv_wc.byte_len}.
     *
     * @return bytes
     */
    public int byteLength() {
        return batch().byteLength(index);
    }

    /**
     * The immediate data ({@code ibv_wc.imm_data}), in host order.
     *
     * @return the value ({@link #hasImmediate()} says whether there was one)
     */
    public int immediateData() {
        return batch().immediateData(index);
    }

    /**
     * Whether it carries immediate data ({@code IBV_WC_WITH_IMM}).
     *
     * @return {@code true} if so
     */
    public boolean hasImmediate() {
        return batch().hasImmediate(index);
    }

    /**
     * The local QP number ({@code ibv_wc.qp_num}).
     *
     * @return the QP number
     */
    public int qpNumber() {
        return batch().qpNumber(index);
    }

    /**
     * For a receive: the region its (first) buffer was in, as posted; see {@link WorkCompletions#region(int)}.
     *
     * @return the region, or {@code null} for sends
     */
    public MemoryRegion region() {
        return batch().region(index);
    }

    /**
     * For a receive: the offset of its buffer in {@link #region()}.
     *
     * @return the offset
     */
    public long bufferOffset() {
        return batch().bufferOffset(index);
    }

    /**
     * An immutable copy, to keep after the handler returns (allocates).
     *
     * @return the completion
     */
    public WorkCompletion toCompletion() {
        return batch().get(index);
    }

    @Override
    public String toString() {
        return batch == null ? "CompletionView(released)" : "CompletionView(" + batch.get(index) + ")";
    }
}
