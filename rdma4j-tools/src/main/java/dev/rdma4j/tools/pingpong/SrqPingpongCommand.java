package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.CNumberConverter;
import static dev.rdma4j.tools.pingpong.PingpongContext.RECV_WRID;
import static dev.rdma4j.tools.pingpong.PingpongContext.SEND_WRID;

import dev.rdma4j.Device;
import dev.rdma4j.Gid;
import dev.rdma4j.Mtu;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.WcStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rdma4j srq-pingpong}: {@code ibv_srq_pingpong} (rdma-core 44) on rdma4j, interoperable with it.
 * {@code -q} RC QPs share one CQ and one shared receive queue; every QP pings and pongs on its own, and
 * the run ends once {@code -n} sends and {@code -n} receives have completed over all QPs together. The
 * endpoint exchange always carries 256 records each way ({@link SrqPingpongExchange}). With {@code -e}
 * the main loop sleeps until CQ events ({@link PingpongCompletions}). {@code -o} (on-demand paging) is
 * accepted and refused.
 */
@Command(name = "srq-pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "Ping-pong over several reliable connections (RC) whose receives come from one shared "
                + "receive queue (SRQ), like ibv_srq_pingpong: without <host> start a server and wait for "
                + "connection, with <host> connect to the server at <host>. -n counts exchanges over all QPs.")
public final class SrqPingpongCommand extends ConnectedPingpongCommand {
    @Option(names = {"-q", "--num-qp"}, paramLabel = "<num>", converter = CNumberConverter.class,
            defaultValue = "16", description = "number of QPs to use (default 16, less than 256, at most -r)")
    long numQp;

    @Option(names = {"-o", "--odp"}, description = "use on demand paging (not supported: refused)")
    boolean odp;

    @Override
    QpType type() {
        return QpType.RC;
    }

    @Override
    String refusedOption() {
        return odp ? "-o/--odp (on-demand paging) is not supported by rdma4j" : null;
    }

    @Override
    int run(PrintWriter out) throws PingpongException {
        String refused = refusedOption();
        if (refused != null) {
            throw new PingpongException(spec.name() + ": " + refused);
        }
        long port = tcpPort & 0xffffffffL; // unsigned int
        int ib = (int) ibPort;
        long size = size() & 0xffffffffL;
        Mtu mtu;
        try {
            mtu = pathMtu();
        } catch (IllegalArgumentException e) {
            mtu = null;
        }
        if (port > 65535 || ib < 1 || size < 1 || mtu == null) {
            spec.commandLine().usage(out);
            return 1;
        }
        long qpCount = numQp & 0xffffffffL;
        long depth = rxDepth & 0xffffffffL;
        if (qpCount > depth) {
            throw new PingpongException("rx_depth " + (int) depth + " is too small for " + (int) qpCount
                    + " QPs -- must have at least one receive per QP.");
        }
        if (qpCount >= SrqPingpongExchange.MAX_QP) {
            throw new PingpongException("num_qp " + (int) qpCount + " must be less than "
                    + (SrqPingpongExchange.MAX_QP - 1));
        }
        int nqp = (int) qpCount;
        int rx = (int) depth;
        long n = iters & 0xffffffffL;
        int gidx = (int) gidIndex;
        boolean client = host != null;
        Device device = device();

        try (SrqPingpongContext pp = SrqPingpongContext.open(device, size, nqp, rx, ib, events)) {
            int routs = pp.postReceives(rx);
            if (routs < rx) {
                throw new PingpongException("Couldn't post receive (" + routs + ")");
            }
            PortAttributes portInfo = pp.queryPort();
            List<QpEndpoint> local = new ArrayList<>(Collections.nCopies(SrqPingpongExchange.MAX_QP,
                    new QpEndpoint(0, 0, 0, Gid.ZERO)));
            for (int i = 0; i < nqp; i++) {
                if (!portInfo.isRoce() && portInfo.lid() == 0) {
                    throw new PingpongException("Couldn't get local LID");
                }
                Gid gid = gidx >= 0 ? pp.queryGid(gidx) : Gid.ZERO;
                QpEndpoint e = new QpEndpoint(portInfo.lid(), pp.qpNumber(i),
                        ThreadLocalRandom.current().nextInt() & 0xffffff, gid);
                local.set(i, e);
                out.println(PingpongReport.localAddress(e, false));
            }
            out.flush();

            Mtu pathMtu = mtu;
            int serviceLevel = (int) sl;
            QpEndpoint[] remote = client ? SrqPingpongExchange.client(host, (int) port, local)
                    : SrqPingpongExchange.server((int) port, local,
                            r -> pp.connect(r, local, pathMtu, serviceLevel, gidx));
            for (int i = 0; i < nqp; i++) {
                out.println(PingpongReport.remoteAddress(remote[i]));
            }
            out.flush();
            if (client) {
                pp.connect(remote, local, pathMtu, serviceLevel, gidx);
            }

            int[] pending = new int[nqp];
            if (client) {
                if (validate) {
                    pp.writePattern();
                }
                for (int i = 0; i < nqp; i++) {
                    postSend(pp, i);
                    pending[i] = SEND_WRID | RECV_WRID;
                }
            } else {
                java.util.Arrays.fill(pending, RECV_WRID);
            }
            long start = System.nanoTime();
            loop(pp, pending, n, nqp, rx, routs);
            long end = System.nanoTime();
            out.print(PingpongReport.summary(size, n, (float) ((end - start) / 1000)));
            if (!client && validate) {
                for (int page : pp.invalidPages()) {
                    out.println("invalid data in page " + page);
                }
            }
            out.flush();
            pp.closeReporting();
        }
        return 0;
    }

    /**
     * The C tool's traffic loop: take completions (up to {@code rx_depth + num_qp} at a time); count
     * sends and receives over all QPs; refill the SRQ to {@code rx_depth} once at most {@code num_qp}
     * receives are left; and post a QP's next send once its previous send and a receive on it have
     * completed, while fewer than {@code iters} sends have completed in all.
     */
    private static void loop(SrqPingpongContext pp, int[] pending, long iters, int numQp, int rxDepth, int routs)
            throws PingpongException {
        PingpongCompletions wc = pp.completions();
        long scnt = 0;
        long rcnt = 0;
        int posted = routs;
        while (rcnt < iters || scnt < iters) {
            int ne = wc.await();
            for (int i = 0; i < ne; i++) {
                int wrId = (int) wc.wrId[i];
                WcStatus status = wc.status[i];
                if (status != WcStatus.SUCCESS) {
                    throw new PingpongException("Failed status " + status.text() + " (" + status.code()
                            + ") for wr_id " + wrId);
                }
                int qp = pp.findQp(wc.qpNumber[i]);
                if (qp < 0) {
                    throw new PingpongException(String.format(Locale.ROOT, "Couldn't find QPN %06x", wc.qpNumber[i]));
                }
                switch (wrId) {
                    case SEND_WRID -> scnt++;
                    case RECV_WRID -> {
                        if (--posted <= numQp) {
                            posted += pp.postReceives(rxDepth - posted);
                            if (posted < rxDepth) {
                                throw new PingpongException("Couldn't post receive (" + posted + ")");
                            }
                        }
                        rcnt++;
                    }
                    default -> throw new PingpongException("Completion for unknown wr_id " + wrId);
                }
                pending[qp] &= ~wrId;
                if (scnt < iters && pending[qp] == 0) {
                    postSend(pp, qp);
                    pending[qp] = RECV_WRID | SEND_WRID;
                }
            }
        }
    }

    private static void postSend(SrqPingpongContext pp, int qp) throws PingpongException {
        if (pp.postSend(qp) != 0) {
            throw new PingpongException("Couldn't post send");
        }
    }
}
