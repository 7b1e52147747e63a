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
}
