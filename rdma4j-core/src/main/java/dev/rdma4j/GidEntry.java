package dev.rdma4j;

/**
 * One entry of a port's GID table ({@code struct ibv_gid_entry}, from {@code ibv_query_gid_ex}).
 *
 * @param port       the port number (from 1)
 * @param index      the GID index, what {@code -g}/{@code -x} of the C tools takes
 * @param gid        the GID
 * @param type       IB, RoCE v1 or RoCE v2
 * @param netdevIndex the interface index of the netdev behind a RoCE GID, 0 for IB
 */
public record GidEntry(int port, int index, Gid gid, GidType type, int netdevIndex) {

    /** The entry the bindings read. */
    static GidEntry of(dev.rdma4j.internal.ffi.DeviceVerbs.GidInfo g) {
        return new GidEntry(g.port(), g.index(), Gid.of(g.raw()), GidType.of(g.gidType()), g.ndevIfindex());
    }
}
