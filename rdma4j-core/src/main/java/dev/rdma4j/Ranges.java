package dev.rdma4j;

/**
 * Range checks of the values the verbs' structs hold in narrow fields: a value that does not fit is refused
 * with {@link IllegalArgumentException} naming it, instead of being truncated into the C field.
 */
final class Ranges {
    private Ranges() {
    }

    /** {@code value} in {@code lo..hi}, or an {@link IllegalArgumentException} naming {@code what}. */
    static int check(String what, int value, int lo, int hi) {
        if (value < lo || value > hi) {
            throw new IllegalArgumentException(what + " must be " + lo + ".." + hi + ": " + value);
        }
        return value;
    }

    /**
     * {@code offset} and {@code length} non-negative and within {@code size} bytes of {@code of}, or an
     * {@link IllegalArgumentException} naming the two arguments and the values; allocation-free when they fit.
     *
     * @param offsetName the offset's parameter name ({@code "offset"}, {@code "remoteOffset"}, ...)
     * @param lengthName the length's parameter name
     * @param of         what they address ({@code "the region"}, {@code "the remote region"}, ...)
     */
    static void checkSlice(String offsetName, long offset, String lengthName, long length, String of, long size) {
        if (offset < 0 || length < 0 || offset > size || length > size - offset) {
            throw new IllegalArgumentException(sliceError(offsetName, offset, lengthName, length, of, size));
        }
    }

    static String sliceError(String offsetName, long offset, String lengthName, long length, String of, long size) {
        if (offset < 0) {
            return offsetName + " must be >= 0: " + offset;
        }
        if (length < 0) {
            return lengthName + " must be >= 0: " + length;
        }
        return offsetName + " " + offset + " + " + lengthName + " " + length + " exceeds the " + size + " bytes of "
                + of;
    }
}
