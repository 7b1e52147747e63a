package dev.rdma4j;

import dev.rdma4j.internal.ffi.Structs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The 40 bytes at the head of every UD receive buffer ({@link QueuePair#UD_GRH_BYTES}), valid when
 * the completion has {@link WorkCompletions#FLAG_GRH}. On InfiniBand and RoCE v1/v2 over IPv6 they
 * are the IPv6-format GRH; on RoCE v2 over IPv4 the first 20 bytes are unused and the last 20 hold
 * the IPv4 header, whose addresses are reported here as IPv4-mapped GIDs.
 *
 * @param sourceGid      the sender's GID
 * @param destinationGid the GID the packet was sent to
 * @param ipv4           whether the header was IPv4 (RoCE v2 over IPv4)
 * @param raw            the 40 bytes as received
 */
public record GlobalRouteHeader(Gid sourceGid, Gid destinationGid, boolean ipv4, byte[] raw) {
    /** Size of the area. */
    public static final int BYTES = Structs.GRH_BYTES;

    /**
     * Decodes the header at {@code offset} of a received buffer.
     *
     * @param buffer the receive buffer
     * @param offset where the receive started
     * @return the header
     * @throws IllegalArgumentException if {@code offset} is negative or the buffer has fewer than {@link #BYTES}
     *                                  bytes there
     */
    public static GlobalRouteHeader read(MemorySegment buffer, long offset) {
        Ranges.checkSlice("offset", offset, "the header's length", BYTES, "the buffer", buffer.byteSize());
        byte[] raw = buffer.asSlice(offset, BYTES).toArray(ValueLayout.JAVA_BYTE);
        boolean ipv4 = (raw[20] >> 4) == 4 && Arrays.equals(raw, 0, 20, new byte[20], 0, 20);
        if (ipv4) {
            return new GlobalRouteHeader(mapped(raw, 32), mapped(raw, 36), true, raw);
        }
        return new GlobalRouteHeader(gid(raw, Structs.GRH_SGID_OFFSET), gid(raw, Structs.GRH_DGID_OFFSET),
                false, raw);
    }

    private static Gid gid(byte[] raw, int at) {
        return Gid.of(Arrays.copyOfRange(raw, at, at + Structs.GID_BYTES));
    }

    private static Gid mapped(byte[] raw, int at) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        System.arraycopy(raw, at, g, 12, 4);
        return Gid.of(g);
    }

    /**
     * The 40 bytes as received.
     *
     * @return a copy
     */
    @Override
    public byte[] raw() {
        return raw.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GlobalRouteHeader g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    @Override
    public String toString() {
        return "GlobalRouteHeader[" + sourceGid + " -> " + destinationGid + (ipv4 ? ", IPv4" : "") + "]";
    }
}
