package dev.rdma4j;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;

/**
 * A 128-bit global identifier ({@code union ibv_gid}): the port address on RoCE, where it is an IPv6
 * address or an IPv4 address mapped into IPv6 ({@code ::ffff:a.b.c.d}). Immutable.
 *
 * <p>Threading: immutable, thread-safe.
 */
public final class Gid {
    /** The all-zero GID (an unused table entry). */
    public static final Gid ZERO = new Gid(new byte[16]);

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /**
     * A GID from its 16 raw bytes (network order, as in {@code ibv_gid.raw}).
     *
     * @param raw 16 bytes, copied
     * @return the GID
     * @throws IllegalArgumentException if {@code raw} is not 16 bytes long
     */
    public static Gid of(byte[] raw) {
        if (raw.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /**
     * The IPv4-mapped GID of an IPv4 address ({@code ::ffff:a.b.c.d}), as RoCE v2 uses.
     *
     * @param address the IPv4 address
     * @return the GID
     */
    public static Gid ofIpv4(Inet4Address address) {
        byte[] raw = new byte[16];
        raw[10] = (byte) 0xff;
        raw[11] = (byte) 0xff;
        System.arraycopy(address.getAddress(), 0, raw, 12, 4);
        return new Gid(raw);
    }

    /**
     * The raw bytes.
     *
     * @return a copy of the 16 bytes in network order
     */
    public byte[] toBytes() {
        return raw.clone();
    }

    /**
     * The upper 64 bits ({@code ibv_gid.global.subnet_prefix}) in host order.
     *
     * @return the subnet prefix
     */
    public long subnetPrefix() {
        return word64(0);
    }

    /**
     * The lower 64 bits ({@code ibv_gid.global.interface_id}) in host order.
     *
     * @return the interface id
     */
    public long interfaceId() {
        return word64(8);
    }

    private long word64(int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = (v << 8) | (raw[i] & 0xff);
        }
        return v;
    }

    /**
     * Whether all bytes are zero; {@code ibv_devinfo} skips such GIDs (it tests the interface id).
     *
     * @return {@code true} for an unused entry
     */
    public boolean isZero() {
        return interfaceId() == 0;
    }

    /**
     * Whether this is an IPv4-mapped address ({@code ::ffff:a.b.c.d}).
     *
     * @return {@code true} if {@link #ipv4()} has a value
     */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /**
     * The IPv4 address of an IPv4-mapped GID.
     *
     * @return the address, or empty if this GID is not IPv4-mapped
     */
    public Optional<Inet4Address> ipv4() {
        if (!isIpv4Mapped()) {
            return Optional.empty();
        }
        try {
            return Optional.of((Inet4Address) InetAddress.getByAddress(Arrays.copyOfRange(raw, 12, 16)));
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The 32 hex digits of the raw bytes, as the pingpong tools put a GID on the wire.
     *
     * @return e.g. {@code "00000000000000000000ffffc6120001"}
     */
    public String toHex() {
        return HexFormat.of().formatHex(raw);
    }

    /**
     * The colon-separated hex byte pairs {@code ibv_devinfo} prints for IB and RoCE v1 GIDs.
     *
     * @return e.g. {@code "fe80:0000:0000:0000:...."}
     */
    public String toRawString() {
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 16; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(HexFormat.of().toHexDigits(raw[i])).append(HexFormat.of().toHexDigits(raw[i + 1]));
        }
        return sb.toString();
    }

    /**
     * The IPv6 text form exactly as glibc's {@code inet_ntop(AF_INET6)} writes it (longest zero run
     * compressed, IPv4-mapped tail dotted), which is what {@code ibv_devinfo} prints for RoCE v2 GIDs.
     *
     * @return e.g. {@code "::ffff:198.18.0.1"} or {@code "fe80::1"}
     */
    @Override
    public String toString() {
        int[] words = new int[8];
        for (int i = 0; i < 8; i++) {
            words[i] = ((raw[2 * i] & 0xff) << 8) | (raw[2 * i + 1] & 0xff);
        }
        int bestBase = -1;
        int bestLen = 0;
        int curBase = -1;
        int curLen = 0;
        for (int i = 0; i < 8; i++) {
            if (words[i] == 0) {
                if (curBase == -1) {
                    curBase = i;
                    curLen = 1;
                } else {
                    curLen++;
                }
            } else if (curBase != -1) {
                if (bestBase == -1 || curLen > bestLen) {
                    bestBase = curBase;
                    bestLen = curLen;
                }
                curBase = -1;
            }
        }
        if (curBase != -1 && (bestBase == -1 || curLen > bestLen)) {
            bestBase = curBase;
            bestLen = curLen;
        }
        if (bestBase != -1 && bestLen < 2) {
            bestBase = -1;
        }
        StringBuilder sb = new StringBuilder(46);
        for (int i = 0; i < 8; i++) {
            if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
                if (i == bestBase) {
                    sb.append(':');
                }
                continue;
            }
            if (i != 0) {
                sb.append(':');
            }
            if (i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff))) {
                sb.append(raw[12] & 0xff).append('.').append(raw[13] & 0xff).append('.')
                        .append(raw[14] & 0xff).append('.').append(raw[15] & 0xff);
                return sb.toString();
            }
            sb.append(Integer.toHexString(words[i]));
        }
        if (bestBase != -1 && bestBase + bestLen == 8) {
            sb.append(':');
        }
        return sb.toString();
    }

    /**
     * Parses the 32-hex-digit wire form (see {@link #toHex()}).
     *
     * @param hex 32 hex digits
     * @return the GID
     * @throws IllegalArgumentException if the text is not 32 hex digits
     */
    public static Gid parseHex(String hex) {
        if (hex.length() != 32) {
            throw new IllegalArgumentException("a GID in hex has 32 digits: " + hex);
        }
        return new Gid(HexFormat.of().parseHex(hex));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }
}
