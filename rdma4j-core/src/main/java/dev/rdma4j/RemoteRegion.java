package dev.rdma4j;

/**
 * A peer's memory region as RDMA read/write/atomics address it: virtual address, length and rkey.
 * A plain value to send over the wire ({@link MemoryRegion#remote()} on the owning side).
 *
 * @param address the region's start address in the peer's address space
 * @param length  its length in bytes
 * @param rkey    the remote key of the peer's {@code ibv_mr}
 */
public record RemoteRegion(long address, long length, int rkey) {
    /**
     * Validates the value.
     *
     * @param address the start address
     * @param length  the length, non-negative
     * @param rkey    the remote key
     */
    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("negative length: " + length);
        }
    }

    /**
     * A sub-range, bounds-checked.
     *
     * @param offset from the start, bytes
     * @param size   bytes
     * @return the sub-range with the same rkey
     * @throws IllegalArgumentException if {@code offset} or {@code size} is negative or the range does not fit
     *                                  the region (the message names the argument and the values)
     */
    public RemoteRegion slice(long offset, long size) {
        Ranges.checkSlice("offset", offset, "size", size, "the remote region", length);
        return new RemoteRegion(address + offset, size, rkey);
    }
}
