package dev.rdma4j.net;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.RemoteRegion;
import java.net.ProtocolException;
import java.nio.ByteBuffer;

/**
 * The region a side exposes, offered in rdma_cm's private data while connecting: none, or exactly 20 bytes (address,
 * length, rkey).
 *
 * <p>Threading: stateless.
 */
final class RegionOffer {
    private RegionOffer() {
    }

    /** The private data offering {@code exposed} to the peer: 20 bytes (address, length, rkey), or none. */
    static byte[] privateData(MemoryRegion exposed) {
        if (exposed == null) {
            return new byte[0];
        }
        return ByteBuffer.allocate(20).putLong(exposed.address()).putLong(exposed.length()).putInt(exposed.rkey())
                .array();
    }

    /**
     * The peer's exposed region from its rdma_cm private data: none (no region) or exactly 20 bytes (address,
     * length, rkey). Anything else is not an rdma4j peer's (e.g. a C client's CM padding, garbage).
     *
     * @throws ProtocolException naming what is wrong
     */
    static RemoteRegion parse(byte[] privateData) throws ProtocolException {
        if (privateData.length == 0) {
            return null;
        }
        if (privateData.length != 20) {
            throw new ProtocolException("the peer sent " + privateData.length + " bytes of private data, where an"
                    + " rdma4j peer sends none or 20 (address, length, rkey of its exposed region)");
        }
        ByteBuffer b = ByteBuffer.wrap(privateData);
        long address = b.getLong();
        long length = b.getLong();
        int rkey = b.getInt();
        if (length < 0) {
            throw new ProtocolException("the peer's private data names a region of negative length (" + length + ")");
        }
        if (length == 0) {
            throw new ProtocolException("the peer's private data names an empty region (an rdma4j peer without a"
                    + " region sends no private data)");
        }
        return new RemoteRegion(address, length, rkey);
    }

}
