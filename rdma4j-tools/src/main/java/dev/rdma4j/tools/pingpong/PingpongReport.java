package dev.rdma4j.tools.pingpong;

import dev.rdma4j.QpEndpoint;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/** The lines the C pingpong examples print on stdout, with C's {@code printf} rounding. */
final class PingpongReport {
    private PingpongReport() {
    }

    /**
     * {@code "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s"}; ibv_ud_pingpong prints
     * {@code "PSN 0x%06x: GID"} there, which {@code colonBeforeGid} reproduces.
     *
     * @param e              this side's endpoint
     * @param colonBeforeGid the ud_pingpong spelling
     * @return the line
     */
    static String localAddress(QpEndpoint e, boolean colonBeforeGid) {
        return address("  local address:  ", e, colonBeforeGid ? ":" : ",");
    }

    /**
     * {@code "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s"}.
     *
     * @param e the peer's endpoint
     * @return the line
     */
    static String remoteAddress(QpEndpoint e) {
        return address("  remote address: ", e, ",");
    }

    private static String address(String label, QpEndpoint e, String beforeGid) {
        // the GID as inet_ntop(AF_INET6) prints it, which Gid.toString() follows
        return String.format(Locale.ROOT, "%sLID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s", label, e.lid(), e.qpn(),
                e.psn(), beforeGid, e.gid());
    }

    /**
     * The two summary lines, computed as the C code does: the elapsed time is a {@code float} of
     * microseconds, the per-iteration time a {@code float} quotient.
     *
     * @param size  message size in bytes
     * @param iters iterations ({@code -n})
     * @param usec  elapsed microseconds
     * @return {@code "%lld bytes in %.2f seconds = %.2f Mbit/sec"} and
     *         {@code "%d iters in %.2f seconds = %.2f usec/iter"}, each with a line separator
     */
    static String summary(long size, long iters, float usec) {
        long bytes = size * iters * 2;
        String nl = System.lineSeparator();
        return bytes + " bytes in " + fixed2(usec / 1000000.) + " seconds = " + fixed2(bytes * 8. / usec)
                + " Mbit/sec" + nl + (int) iters + " iters in " + fixed2(usec / 1000000.) + " seconds = "
                + fixed2(usec / (float) iters) + " usec/iter" + nl;
    }

    /**
     * {@code printf("%.2f", v)} as glibc does it: the exact binary value rounded half to even, and
     * {@code inf}/{@code nan} spelled the C way.
     *
     * @param v the value
     * @return the text
     */
    static String fixed2(double v) {
        if (Double.isNaN(v)) {
            return "-nan"; // 0/0 on x86-64 yields the negative default NaN, which glibc prints so
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        String s = new BigDecimal(v).setScale(2, RoundingMode.HALF_EVEN).toPlainString();
        return v < 0 || (v == 0 && 1 / v < 0) ? (s.startsWith("-") ? s : "-" + s) : s;
    }
}
