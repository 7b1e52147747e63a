package dev.rdma4j.tools;

import picocli.CommandLine.ITypeConverter;

/**
 * Parses a number the way the C tools' {@code strtol(optarg, NULL, 0)} does: optional sign, {@code 0x}
 * for hex, a leading {@code 0} for octal, digits up to the first one that does not fit, and 0 when
 * there are none. Out-of-range values saturate; callers narrow to the C variable's type.
 */
public final class CNumberConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        return parse(value);
    }

    /**
     * The value {@code strtol(s, NULL, 0)} returns.
     *
     * @param s the text
     * @return the parsed number
     */
    static long parse(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        int radix = 10;
        if (i + 1 < n && s.charAt(i) == '0' && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')
                && i + 2 < n && Character.digit(s.charAt(i + 2), 16) >= 0) {
            radix = 16;
            i += 2;
        } else if (i < n && s.charAt(i) == '0') {
            radix = 8;
        }
        long v = 0;
        boolean overflow = false;
        for (; i < n; i++) {
            int d = Character.digit(s.charAt(i), radix);
            if (d < 0 || s.charAt(i) > 0x7f) {
                break;
            }
            if (v > (Long.MAX_VALUE - d) / radix) {
                overflow = true;
            } else {
                v = v * radix + d;
            }
        }
        if (overflow) {
            return negative ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return negative ? -v : v;
    }

    /**
     * C's {@code atoi}: leading white space, an optional sign, then digits up to the first non-digit;
     * 0 when there are none; beyond {@code int}, glibc's {@code (int) strtol(s, NULL, 10)}.
     *
     * @param s the text
     * @return the number
     */
    public static int atoi(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && (s.charAt(i) == ' ' || (s.charAt(i) >= '\t' && s.charAt(i) <= '\r'))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        long v = 0;
        boolean overflow = false;
        for (; i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9'; i++) {
            int digit = s.charAt(i) - '0';
            if (v > (Long.MAX_VALUE - digit) / 10) {
                overflow = true; // strtol saturates
            } else if (!overflow) {
                v = v * 10 + digit;
            }
        }
        if (overflow) {
            return (int) (negative ? Long.MIN_VALUE : Long.MAX_VALUE);
        }
        return (int) (negative ? -v : v);
    }
}
