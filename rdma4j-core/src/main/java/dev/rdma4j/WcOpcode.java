package dev.rdma4j;

import dev.rdma4j.internal.EnumCodes;
import dev.rdma4j.internal.ffi.CEnums;

/** What a work completion completed ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    /** {@code IBV_WC_SEND}. */
    SEND(CEnums.IBV_WC_SEND),
    /** {@code IBV_WC_RDMA_WRITE}. */
    RDMA_WRITE(CEnums.IBV_WC_RDMA_WRITE),
    /** {@code IBV_WC_RDMA_READ}. */
    RDMA_READ(CEnums.IBV_WC_RDMA_READ),
    /** {@code IBV_WC_COMP_SWAP}. */
    COMP_SWAP(CEnums.IBV_WC_COMP_SWAP),
    /** {@code IBV_WC_FETCH_ADD}. */
    FETCH_ADD(CEnums.IBV_WC_FETCH_ADD),
    /** {@code IBV_WC_BIND_MW}. */
    BIND_MW(CEnums.IBV_WC_BIND_MW),
    /** {@code IBV_WC_LOCAL_INV}. */
    LOCAL_INV(CEnums.IBV_WC_LOCAL_INV),
    /** {@code IBV_WC_TSO}. */
    TSO(CEnums.IBV_WC_TSO),
    /** {@code IBV_WC_ATOMIC_WRITE}: an atomic write ({@link SendBatch#atomicWrite}). */
    ATOMIC_WRITE(CEnums.IBV_WC_ATOMIC_WRITE),
    /** {@code IBV_WC_RECV}: a receive consumed by a send (with or without immediate). */
    RECV(CEnums.IBV_WC_RECV),
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}: a receive consumed by an RDMA write with immediate. */
    RECV_RDMA_WITH_IMM(CEnums.IBV_WC_RECV_RDMA_WITH_IMM),
    /**
     * A value this version of rdma4j does not know; also what {@link WorkCompletions#opcode(int)} gives for a failed
     * send-queue request whose (undefined) C opcode names a receive.
     */
    UNKNOWN(EnumCodes.NOT_C);

    private final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    /**
     * The C value.
     *
     * @return the {@code ibv_wc_opcode} number
     */
    public int code() {
        return code;
    }

    /**
     * Maps a C value; allocation-free.
     *
     * @param code the number
     * @return the constant, or {@code UNKNOWN}
     */
    public static WcOpcode of(int code) {
        return switch (code) {
            case CEnums.IBV_WC_SEND -> SEND;
            case CEnums.IBV_WC_RDMA_WRITE -> RDMA_WRITE;
            case CEnums.IBV_WC_RDMA_READ -> RDMA_READ;
            case CEnums.IBV_WC_COMP_SWAP -> COMP_SWAP;
            case CEnums.IBV_WC_FETCH_ADD -> FETCH_ADD;
            case CEnums.IBV_WC_BIND_MW -> BIND_MW;
            case CEnums.IBV_WC_LOCAL_INV -> LOCAL_INV;
            case CEnums.IBV_WC_TSO -> TSO;
            case CEnums.IBV_WC_ATOMIC_WRITE -> ATOMIC_WRITE;
            case CEnums.IBV_WC_RECV -> RECV;
            case CEnums.IBV_WC_RECV_RDMA_WITH_IMM -> RECV_RDMA_WITH_IMM;
            default -> UNKNOWN;
        };
    }

    /**
     * Whether this completes a receive. An opcode from {@link WorkCompletions#opcode(int)} or
     * {@link WorkCompletion#opcode()} answers right for failed completions too (rdma4j knows each request's
     * direction); a raw C value of a failed completion would not.
     *
     * @return {@code true} for {@code RECV} and {@code RECV_RDMA_WITH_IMM}
     */
    public boolean isReceive() {
        return this != UNKNOWN && (code & CEnums.IBV_WC_RECV) != 0; // UNKNOWN's code, -1, has every bit
    }
}
