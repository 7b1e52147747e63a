package dev.rdma4j;

import dev.rdma4j.internal.ffi.AhSrqCqAttrs;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A route to a UD destination ({@code struct ibv_ah}, from {@code ibv_create_ah}), used by
 * {@link SendBatch#sendTo}. Posted sends pin it until they complete, so it cannot be closed under
 * them.
 *
 * <p>Threading: thread-safe; immutable once created (close is the only state change, and waits for posts in
 * progress that use it).
 */
public final class AddressHandle extends NativeResource {
    private final MemorySegment handle;
    private final Attributes attributes;

    /**
     * The address vector ({@code struct ibv_ah_attr}).
     *
     * @param port         the local port
     * @param dlid         the destination LID (InfiniBand)
     * @param serviceLevel {@code sl}
     * @param global       whether a GRH is used ({@code is_global}); required on RoCE
     * @param dgid         the destination GID when global
     * @param sgidIndex    the local GID index when global
     * @param hopLimit     GRH hop limit
     * @param trafficClass GRH traffic class
     * @param flowLabel    GRH flow label
     */
    public record Attributes(int port, int dlid, int serviceLevel, boolean global, Gid dgid, int sgidIndex,
            int hopLimit, int trafficClass, int flowLabel) {
        /**
         * Refuses values that do not fit their C fields instead of truncating them.
         *
         * @param port         1..255
         * @param dlid         0..0xffff
         * @param serviceLevel 0..15
         * @param global       whether a GRH is used
         * @param dgid         the destination GID, not null when global
         * @param sgidIndex    0..255 when global (else ignored: -1..255)
         * @param hopLimit     0..255
         * @param trafficClass 0..255
         * @param flowLabel    0..0xfffff (20 bits)
         * @throws IllegalArgumentException naming a value out of its range
         */
        public Attributes {
            Ranges.check("port", port, 1, 255);
            Ranges.check("dlid", dlid, 0, 0xffff);
            Ranges.check("serviceLevel", serviceLevel, 0, 15);
            Ranges.check("sgidIndex", sgidIndex, global ? 0 : -1, 255);
            Ranges.check("hopLimit", hopLimit, 0, 255);
            Ranges.check("trafficClass", trafficClass, 0, 255);
            Ranges.check("flowLabel", flowLabel, 0, 0xfffff);
            if (global && dgid == null) {
                throw new IllegalArgumentException("a global address needs its dgid");
            }
        }


        /**
         * The route to a peer's endpoint as the pingpong examples build it: GRH when the peer has a GID,
         * hop limit 1.
         *
         * @param remote    the peer
         * @param port      the local port
         * @param sgidIndex the local GID index
         * @return the attributes
         */
        public static Attributes to(QpEndpoint remote, int port, int sgidIndex) {
            return new Attributes(port, remote.lid(), 0, !remote.gid().isZero(), remote.gid(), sgidIndex, 1, 0, 0);
        }

        /**
         * Reads a {@code struct ibv_ah_attr} that C filled (rdma_cm's events, {@code ibv_init_ah_from_wc}).
         *
         * @param ahAttr the struct
         * @return its attributes
         */
        static Attributes decode(MemorySegment ahAttr) {
            AhSrqCqAttrs.Ah ah = AhSrqCqAttrs.decodeAh(ahAttr);
            return new Attributes(ah.port(), ah.dlid(), ah.serviceLevel(), ah.global(),
                    ah.global() ? Gid.of(ah.dgid()) : null, ah.global() ? ah.sgidIndex() : -1, ah.hopLimit(),
                    ah.trafficClass(), ah.flowLabel());
        }
    }

    AddressHandle(ProtectionDomain pd, Attributes a) throws VerbsException {
        super("AddressHandle(" + (a.global() ? a.dgid() : "lid " + a.dlid()) + ")", pd, true);
        MemorySegment ah;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = AhSrqCqAttrs.ahAttr(arena);
            encode(attr, false, a);
            ah = ResourceVerbs.createAh(pd.handle(), attr);
        } catch (NativeException e) {
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
        this.handle = ah;
        this.attributes = a;
    }

    /** Writes a {@code struct ibv_ah_attr}, or ({@code inQpAttr}) the {@code ah_attr} of a {@code struct ibv_qp_attr}. */
    static void encode(MemorySegment s, boolean inQpAttr, Attributes a) {
        AhSrqCqAttrs.encodeAh(s, inQpAttr, a.dlid(), a.serviceLevel(), a.global(), a.port(),
                a.global() ? a.dgid().toBytes() : null, a.sgidIndex(), a.hopLimit(), a.trafficClass(), a.flowLabel());
    }

    /**
     * The attributes the handle was created with.
     *
     * @return the address vector
     */
    public Attributes attributes() {
        return attributes;
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    void destroy() {
        try {
            ResourceVerbs.destroyAh(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        }
    }
}
