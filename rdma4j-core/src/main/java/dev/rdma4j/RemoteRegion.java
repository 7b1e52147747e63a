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
     * @throws IndexOutOfBoundsException if it does not fit
     */
    public RemoteRegion slice(long offset, long size) {
        java.util.Objects.checkFromIndexSize(offset, size, length);
        return new RemoteRegion(address + offset, size, rkey);
    }
}
