package dev.rdma4j.tools.pingpong;

import static dev.rdma4j.tools.pingpong.PingpongContext.destroy;
import static dev.rdma4j.tools.pingpong.PingpongContext.verb;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.Gid;
import dev.rdma4j.InitAttributes;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.Mtu;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.SendBatch;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.VerbsException;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The verbs side of {@code ibv_srq_pingpong} ({@code pp_init_ctx}, {@code pp_connect_ctx},
 * {@code pp_post_recv}, {@code pp_post_send}, {@code pp_close_ctx} of {@code srq_pingpong.c}): one
 * zeroed buffer of {@code -s} bytes, one CQ of {@code rx_depth + num_qp} entries, one SRQ of
 * {@code rx_depth} receives of the whole buffer, and {@code num_qp} RC QPs (one send request, one SGE,
 * no receive queue of their own) on that CQ and SRQ. Failures are reported with the C tool's messages.
 */
final class SrqPingpongContext implements AutoCloseable {
    /** The byte the C tool's buffer starts as, and what {@code -c} expects at every page start. */
    private static final byte ZERO = 0;
    private static final int ENODATA = 61;

    private final int size;
    private final int ibPort;
    private final SendBatch send = new SendBatch(1, 1);
    private final ReceiveBatch receive = new ReceiveBatch(1, 1);
    private final List<QueuePair> qps = new ArrayList<>();
    private final Map<Integer, Integer> byQpn = new HashMap<>();
    private Context context;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private PingpongCompletions cq;
    private SharedReceiveQueue srq;
    private boolean inline;

    private SrqPingpongContext(int size, int ibPort) {
        this.size = size;
        this.ibPort = ibPort;
    }

    /**
     * Opens the device and creates everything up to {@code numQp} QPs in INIT.
     *
     * @param device  the device
     * @param size    message size ({@code -s})
     * @param numQp   QPs ({@code -q})
     * @param rxDepth the SRQ's receives ({@code -r})
     * @param ibPort  the device port ({@code -i})
     * @param events  {@code -e}
     * @return the context
     * @throws PingpongException with the C tool's message
     */
    static SrqPingpongContext open(Device device, long size, int numQp, int rxDepth, int ibPort, boolean events)
            throws PingpongException {
        if (size < 1 || size > Integer.MAX_VALUE) {
            throw new PingpongException("Couldn't allocate work buf.");
        }
        SrqPingpongContext c = new SrqPingpongContext((int) size, ibPort);
        try {
            c.init(device, numQp, rxDepth, events);
            return c;
        } catch (PingpongException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private void init(Device device, int numQp, int rxDepth, boolean events) throws PingpongException {
        context = verb("Couldn't get context for " + device.name(), device::open);
        pd = verb("Couldn't allocate PD", context::allocateProtectionDomain);
        mr = verb("Couldn't register MR", () -> pd.allocate(size, AccessFlag.LOCAL_WRITE));
        mr.segment().fill(ZERO);
        cq = PingpongCompletions.open(context, rxDepth + numQp, rxDepth + numQp, events);
        srq = verb("Couldn't create SRQ", () -> pd.createSharedReceiveQueue(rxDepth, 1, 0));
        for (int i = 0; i < numQp; i++) {
            QueuePair qp = verb("Couldn't create QP[" + i + "]", () -> QueuePair.builder(pd, QpType.RC)
                    .completionQueue(cq.queue()).capacity(1, 0).maxSge(1, 0).sharedReceiveQueue(srq).build());
            qps.add(qp);
            byQpn.put(qp.qpNumber(), i);
            // as the C code: inline for all once any QP can carry the whole message inline
            inline |= qp.capabilities().maxInlineData() >= size;
        }
        InitAttributes init = InitAttributes.builder().port(ibPort).pkeyIndex(0).access().build();
        for (int i = 0; i < numQp; i++) {
            QueuePair qp = qps.get(i);
            verb("Failed to modify QP[" + i + "] to INIT", () -> {
                qp.toInit(init);
                return null;
            });
        }
    }

    /**
     * The port's attributes.
     *
     * @return the attributes
     * @throws PingpongException "Couldn't get port info"
     */
    PortAttributes queryPort() throws PingpongException {
        return verb("Couldn't get port info", () -> context.queryPort(ibPort));
    }

    /**
     * The local GID at {@code index}; an empty entry reads as the zero GID, as {@code ibv_query_gid}
     * returns it.
     *
     * @param index the GID table index ({@code -g})
     * @return the GID
     * @throws PingpongException "Could not get local gid for gid index N"
     */
    Gid queryGid(int index) throws PingpongException {
        return verb("Could not get local gid for gid index " + index, () -> {
            try {
                return context.queryGid(ibPort, index).gid();
            } catch (VerbsException e) {
                if (e.errno() == ENODATA) {
                    return Gid.ZERO;
                }
                throw e;
            }
        });
    }

    /**
     * QP {@code i}'s number.
     *
     * @param i the index
     * @return the QPN
     */
    int qpNumber(int i) {
        return qps.get(i).qpNumber();
    }

    /**
     * Which QP has number {@code qpn} ({@code find_qp}).
     *
     * @param qpn the QP number of a completion
     * @return its index, or -1
     */
    int findQp(int qpn) {
        return byQpn.getOrDefault(qpn, -1);
    }

    /**
     * Connects QP {@code i} to {@code remote[i]} for every QP: RTR and RTS with the C tool's attributes.
     * As the C code, the GRH (hop limit 1, local GID index {@code sgidIndex} as a {@code uint8_t}) is used
     * when the <em>first</em> remote endpoint's GID has a non-zero interface ID, with that GID for every QP.
     *
     * @param remote    the peer's endpoints, in QP order
     * @param local     this side's endpoints (their PSNs)
     * @param mtu       the path MTU ({@code -m})
     * @param sl        the service level ({@code -l})
     * @param sgidIndex the local GID index ({@code -g})
     * @throws PingpongException "Failed to modify QP[i] to RTR" / "... RTS"
     */
    void connect(QpEndpoint[] remote, List<QpEndpoint> local, Mtu mtu, int sl, int sgidIndex)
            throws PingpongException {
        Gid dgid = remote[0].gid();
        boolean global = dgid.interfaceId() != 0;
        for (int i = 0; i < qps.size(); i++) {
            QueuePair qp = qps.get(i);
            QpEndpoint peer = new QpEndpoint(remote[i].lid(), remote[i].qpn(), remote[i].psn(), dgid);
            RtrAttributes rtr = RtrAttributes.builder(peer).pathMtu(mtu).maxDestRdAtomic(1).minRnrTimer(12)
                    .global(global).sgidIndex(sgidIndex & 0xff).hopLimit(1).serviceLevel(sl).build();
            verb("Failed to modify QP[" + i + "] to RTR", () -> {
                qp.toRtr(rtr);
                return null;
            });
            RtsAttributes rts = RtsAttributes.builder(local.get(i).psn()).timeout(14).retryCount(7).rnrRetry(7)
                    .maxRdAtomic(1).build();
            verb("Failed to modify QP[" + i + "] to RTS", () -> {
                qp.toRts(rts);
                return null;
            });
        }
    }

    /**
     * Posts up to {@code n} receives of the whole buffer to the SRQ, one at a time, until one is refused.
     *
     * @param n how many
     * @return how many were posted
     */
    int postReceives(int n) {
        int i = 0;
        while (i < n && srq.tryPost(receive.clear().receive(PingpongContext.RECV_WRID, mr, 0, size)) == 0) {
            i++;
        }
        return i;
    }

    /**
     * Posts one signaled send of the whole buffer on QP {@code i}, inline when the QPs can take it.
     *
     * @param i the QP index
     * @return 0, or the errno of the refusal
     */
    int postSend(int i) {
        send.clear().send(PingpongContext.SEND_WRID, mr, 0, size);
        if (inline) {
            send.inline();
        }
        return qps.get(i).tryPost(send);
    }

    /**
     * The CQ's completions, as the main loop waits for them.
     *
     * @return the completions
     */
    PingpongCompletions completions() {
        return cq;
    }

    /**
     * What {@code -c} makes the client send: the first byte of every page set to
     * {@code i / page_size % sizeof(char)}, always 0, in a buffer that is all zeros anyway.
     */
    void writePattern() {
        long page = PingpongContext.pageSize();
        for (long i = 0; i < size; i += page) {
            mr.segment().set(ValueLayout.JAVA_BYTE, i, ZERO);
        }
    }

    /**
     * The pages of the buffer whose first byte is not 0.
     *
     * @return page numbers, in order
     */
    List<Integer> invalidPages() {
        long page = PingpongContext.pageSize();
        List<Integer> bad = new ArrayList<>();
        for (long i = 0; i < size; i += page) {
            if (mr.segment().get(ValueLayout.JAVA_BYTE, i) != ZERO) {
                bad.add((int) (i / page));
            }
        }
        return bad;
    }

    /**
     * Destroys everything in the C order, reporting the first failure: the QPs, the SRQ, the CQ (and
     * with {@code -e} the completion engine and its channel), the MR, the PD, the context.
     *
     * @throws PingpongException "Couldn't destroy QP[i]" and so on
     */
    void closeReporting() throws PingpongException {
        for (int i = 0; i < qps.size(); i++) {
            destroy(qps.get(i), "Couldn't destroy QP[" + i + "]");
        }
        destroy(srq, "Couldn't destroy SRQ");
        if (cq != null) {
            cq.closeReporting();
        }
        destroy(mr, "Couldn't deregister MR");
        destroy(pd, "Couldn't deallocate PD");
        destroy(context, "Couldn't release context");
        send.close();
        receive.close();
    }

    /** Destroys whatever exists, after a failure: nothing more to report. */
    @Override
    public void close() {
        List<AutoCloseable> all = new ArrayList<>(qps);
        all.addAll(List.of(nonNull(srq), nonNull(cq), nonNull(mr), nonNull(pd), nonNull(context), send, receive));
        for (AutoCloseable r : all) {
            try {
                r.close();
            } catch (Exception e) {
                // already failing; the first failure is the one reported
            }
        }
    }

    private static AutoCloseable nonNull(AutoCloseable r) {
        return r != null ? r : () -> { };
    }


}
