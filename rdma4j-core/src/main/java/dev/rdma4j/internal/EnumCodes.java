package dev.rdma4j.internal;

import java.util.Arrays;
import java.util.function.ToIntFunction;

/**
 * The API enums' codes: rdma4j's own code for an {@code UNKNOWN} that C has no value for, and the decoding table
 * from a C value to its constant, built once at class initialisation so that {@code of(int)} is an array read.
 *
 * <p>Threading: stateless.
 */
public final class EnumCodes {
    /**
     * rdma4j's own code of an enum's {@code UNKNOWN} (a value this version does not know) where the C enum has no
     * such value: no C number, so it lives here and not in {@code internal.ffi}.
     */
    public static final int NOT_C = -1;

    private EnumCodes() {
    }

    /**
     * The decoding table of an enum: index = C value, element = its constant, or {@code unknown} at every index no
     * constant has; negative codes are left out.
     *
     * @param <E>     the enum
     * @param values  its constants
     * @param code    each constant's C value
     * @param unknown the constant for a value not in the enum
     * @return the table, as long as the largest code plus one
     */
    public static <E extends Enum<E>> E[] byCode(E[] values, ToIntFunction<E> code, E unknown) {
        int max = -1;
        for (E e : values) {
            max = Math.max(max, code.applyAsInt(e));
        }
        E[] table = Arrays.copyOf(values, max + 1);
        Arrays.fill(table, unknown);
        for (E e : values) {
            int c = code.applyAsInt(e);
            if (c >= 0) {
                table[c] = e;
            }
        }
        return table;
    }
}
