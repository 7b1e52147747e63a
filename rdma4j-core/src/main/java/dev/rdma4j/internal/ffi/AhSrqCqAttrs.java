package dev.rdma4j.internal.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * Typed encoders and decoders of {@code struct ibv_ah_attr} (alone, or as {@code ah_attr} inside
 * {@code struct ibv_qp_attr}), {@code struct ibv_srq_init_attr} / {@code ibv_srq_attr} with {@code enum
 * ibv_srq_attr_mask}, and {@code struct ibv_cq}'s {@code cqe}: their C members by name, in this room only.
 *
 * <p>Threading: stateless; a segment is the caller's.
 */
public final class AhSrqCqAttrs {
    /** {@code IBV_SRQ_MAX_WR}. */
    public static final int IBV_SRQ_MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}. */
    public static final int IBV_SRQ_LIMIT = 2;

    private AhSrqCqAttrs() {
    }

    /** A zeroed {@code struct ibv_ah_attr}. */
    public static MemorySegment ahAttr(Arena arena) {
        return arena.allocate(Structs.IBV_AH_ATTR);
    }

    /** Writes a {@code struct ibv_ah_attr} ({@code s} one) or the {@code ah_attr} of a {@code struct ibv_qp_attr}. */
    public static void encodeAh(MemorySegment s, boolean inQpAttr, int dlid, int serviceLevel, boolean global,
            int port, byte[] dgid, int sgidIndex, int hopLimit, int trafficClass, int flowLabel) {
        MemoryLayout l = inQpAttr ? Structs.IBV_QP_ATTR : Structs.IBV_AH_ATTR;
        String p = inQpAttr ? "ah_attr." : "";
        Codec.put(s, l, p + "dlid", dlid);
        Codec.put(s, l, p + "sl", serviceLevel);
        Codec.put(s, l, p + "src_path_bits", 0);
        Codec.put(s, l, p + "static_rate", 0);
        Codec.put(s, l, p + "is_global", global ? 1 : 0);
        Codec.put(s, l, p + "port_num", port);
        if (global) {
            Codec.putBytes(s, l, p + "grh.dgid", dgid);
            Codec.put(s, l, p + "grh.sgid_index", sgidIndex);
            Codec.put(s, l, p + "grh.hop_limit", hopLimit);
            Codec.put(s, l, p + "grh.traffic_class", trafficClass);
            Codec.put(s, l, p + "grh.flow_label", flowLabel);
        }
    }

    /** The members of a {@code struct ibv_ah_attr}, decoded. */
    public record Ah(int dlid, int serviceLevel, boolean global, int port, byte[] dgid, int sgidIndex, int hopLimit,
            int trafficClass, int flowLabel) {
    }

    /** Reads a {@code struct ibv_ah_attr} (e.g. one rdma_cm delivered in an event). */
    public static Ah decodeAh(MemorySegment s) {
        MemoryLayout l = Structs.IBV_AH_ATTR;
        return new Ah((int) Codec.get(s, l, "dlid"), (int) Codec.get(s, l, "sl"), Codec.get(s, l, "is_global") != 0,
                (int) Codec.get(s, l, "port_num"), Codec.getBytes(s, l, "grh.dgid", 16),
                (int) Codec.get(s, l, "grh.sgid_index"), (int) Codec.get(s, l, "grh.hop_limit"),
                (int) Codec.get(s, l, "grh.traffic_class"), (int) Codec.get(s, l, "grh.flow_label"));
    }

    /**
     * A {@code struct ibv_wc} with the members {@code ibv_init_ah_from_wc} reads ({@code wc_flags}, {@code slid},
     * {@code sl}, {@code src_qp}), for a completion rdma4j copied.
     */
    public static MemorySegment wcForAh(Arena arena, int wcFlags, int slid, int serviceLevel, int sourceQp) {
        MemoryLayout l = Structs.IBV_WC;
        MemorySegment s = arena.allocate(l);
        Codec.put(s, l, "wc_flags", wcFlags);
        Codec.put(s, l, "slid", slid);
        Codec.put(s, l, "sl", serviceLevel);
        Codec.put(s, l, "src_qp", sourceQp);
        return s;
    }

    /** A {@code struct ibv_srq_init_attr} for {@code ibv_create_srq}. */
    public static MemorySegment srqInit(Arena arena, int maxWr, int maxSge, int limit) {
        MemoryLayout l = Structs.IBV_SRQ_INIT_ATTR;
        MemorySegment s = arena.allocate(l);
        Codec.put(s, l, "attr.max_wr", maxWr);
        Codec.put(s, l, "attr.max_sge", maxSge);
        Codec.put(s, l, "attr.srq_limit", limit);
        return s;
    }

    /** What {@code ibv_create_srq} wrote back into its init attribute: {max_wr, max_sge}. */
    public static int[] srqGranted(MemorySegment init) {
        MemoryLayout l = Structs.IBV_SRQ_INIT_ATTR;
        return new int[] {(int) Codec.get(init, l, "attr.max_wr"), (int) Codec.get(init, l, "attr.max_sge")};
    }

    /** A {@code struct ibv_srq_attr} for {@code ibv_modify_srq} (or zeroed, for {@code ibv_query_srq}). */
    public static MemorySegment srqAttr(Arena arena, int maxWr, int limit) {
        MemoryLayout l = Structs.IBV_SRQ_ATTR;
        MemorySegment s = arena.allocate(l);
        Codec.put(s, l, "max_wr", maxWr);
        Codec.put(s, l, "srq_limit", limit);
        return s;
    }

    /** What {@code ibv_query_srq} wrote: {max_wr, max_sge, srq_limit}. */
    public static int[] srqQueried(MemorySegment attr) {
        MemoryLayout l = Structs.IBV_SRQ_ATTR;
        return new int[] {(int) Codec.get(attr, l, "max_wr"), (int) Codec.get(attr, l, "max_sge"),
            (int) Codec.get(attr, l, "srq_limit")};
    }

    /** {@code cq->cqe}: the entries the device gave a {@code struct ibv_cq}. */
    public static int cqe(MemorySegment cq) {
        return (int) Codec.get(cq, Structs.IBV_CQ, "cqe");
    }
}
