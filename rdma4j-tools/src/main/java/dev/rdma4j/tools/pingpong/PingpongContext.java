package dev.rdma4j.tools.pingpong;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.AddressHandle;
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
import dev.rdma4j.VerbsException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The verbs side of one pingpong run, as the C examples' {@code struct pingpong_context} with
 * {@code pp_init_ctx}, {@code pp_connect_ctx}, {@code pp_post_recv}, {@code pp_post_send} and
 * {@code pp_close_ctx}: one buffer, one CQ of {@code rx_depth + 1} entries, one QP (1 send and
 * {@code rx_depth} receive requests, one SGE each). The three transports differ only here:
 * <ul>
 * <li>RC and UC: INIT with no access rights, RTR/RTS towards the peer (RC with its retry attributes);
 * <li>UD: the buffer has 40 bytes of GRH room in front, receives take all of it, sends start after it
 *     and go through an address handle to the peer's QPN with Q_Key 0x11111111.
 * </ul>
 * Failures are reported with the C tools' messages.
 */
final class PingpongContext implements AutoCloseable {
    /** wr_id of the receives ({@code PINGPONG_RECV_WRID}). */
    static final int RECV_WRID = 1;
    /** wr_id of the sends ({@code PINGPONG_SEND_WRID}). */
    static final int SEND_WRID = 2;
    /** The Q_Key ud_pingpong uses on both sides. */
    static final int UD_QKEY = 0x11111111;
    /** The byte the C tools fill the buffer with. */
    private static final byte FILL = 0x7b;
    private static final int AT_PAGESZ = 6;
    private static final int ENODATA = 61;

    private final QpType type;
    private final int size;
    private final int ibPort;
    private final int headroom;
    private final SendBatch send = new SendBatch(1, 1);
    private final ReceiveBatch receive = new ReceiveBatch(1, 1);
    private Context context;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private PingpongCompletions cq;
    private QueuePair qp;
    private AddressHandle ah;
    private boolean inline;
    private int remoteQpn;

    @FunctionalInterface
    interface Verb<T> {
        T run() throws VerbsException;
    }

    @FunctionalInterface
    private interface VoidVerb {
        void run() throws VerbsException;
    }

    private PingpongContext(QpType type, int size, int ibPort) {
        this.type = type;
        this.size = size;
        this.ibPort = ibPort;
        this.headroom = type == QpType.UD ? QueuePair.UD_GRH_BYTES : 0;
    }

    /**
     * Opens the device and creates everything up to a QP in INIT ({@code pp_init_ctx}).
     *
     * @param type    RC, UC or UD
     * @param device  the device
     * @param size    message size ({@code -s})
     * @param rxDepth receives to keep posted ({@code -r})
     * @param ibPort  the device port ({@code -i})
     * @param events  {@code -e}: wait for CQ events instead of busy-polling ({@link PingpongCompletions})
     * @return the context
     * @throws PingpongException with the C tool's message
     */
    static PingpongContext open(QpType type, Device device, long size, int rxDepth, int ibPort, boolean events)
            throws PingpongException {
        if (size < 0 || size > Integer.MAX_VALUE - QueuePair.UD_GRH_BYTES) {
            throw new PingpongException("Couldn't allocate work buf.");
        }
        PingpongContext c = new PingpongContext(type, (int) size, ibPort);
        try {
            c.init(device, rxDepth, events);
            return c;
        } catch (PingpongException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private void init(Device device, int rxDepth, boolean events) throws PingpongException {
        context = verb("Couldn't get context for " + device.name(), device::open);
        if (type == QpType.UD) {
            PortAttributes p = verb("Unable to query port info for port " + ibPort, () -> context.queryPort(ibPort));
            int mtu = p.activeMtu().bytes();
            if (size > mtu) {
                throw new PingpongException("Requested size larger than port MTU (" + mtu + ")");
            }
        }
        pd = verb("Couldn't allocate PD", context::allocateProtectionDomain);
        mr = verb("Couldn't register MR", () -> pd.allocate((long) size + headroom, AccessFlag.LOCAL_WRITE));
        mr.segment().fill(FILL);
        cq = PingpongCompletions.open(context, rxDepth + 1, 2, events);
        qp = verb("Couldn't create QP", () -> QueuePair.builder(pd, type).completionQueue(cq.queue())
                .capacity(1, rxDepth).maxSge(1, 1).build());
        // as the C code, which asks for no inline data and uses what the device grants anyway
        inline = qp.capabilities().maxInlineData() >= size;
        InitAttributes.Builder init = InitAttributes.builder().port(ibPort).pkeyIndex(0);
        InitAttributes attributes = type == QpType.UD ? init.qkey(UD_QKEY).build() : init.access().build();
        run("Failed to modify QP to INIT", () -> qp.toInit(attributes));
    }

    /**
     * The port's attributes ({@code pp_get_port_info}).
     *
     * @return the attributes
     * @throws PingpongException "Couldn't get port info"
     */
    PortAttributes queryPort() throws PingpongException {
        return verb("Couldn't get port info", () -> context.queryPort(ibPort));
    }

    /**
     * The local GID at {@code index} ({@code -g}). An empty entry of the table reads as the zero GID, as
     * the C tools' {@code ibv_query_gid} returns it ({@link Context#queryGid} refuses it with
     * {@code ENODATA}); an index outside the table fails.
     *
     * @param index   the GID table index
     * @param failure the C tool's message if it cannot be read
     * @return the GID
     * @throws PingpongException with {@code failure}
     */
    Gid queryGid(int index, String failure) throws PingpongException {
        return verb(failure, () -> {
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
     * The QP number peers address.
     *
     * @return the QPN
     */
    int qpNumber() {
        return qp.qpNumber();
    }

    /**
     * Connects the QP to the peer ({@code pp_connect_ctx}): RTR and RTS with the C tools' attributes,
     * and for UD the address handle. The GRH is used when the peer announced a GID with a non-zero
     * interface ID, with hop limit 1 and the local GID index {@code sgidIndex} (as a C {@code uint8_t}).
     *
     * @param remote    the peer's endpoint
     * @param myPsn     the PSN this side announced
     * @param mtu       the path MTU ({@code -m}; ignored by UD)
     * @param sl        the service level ({@code -l})
     * @param sgidIndex the local GID index ({@code -g})
     * @throws PingpongException "Failed to modify QP to RTR" / "... RTS" / "Failed to create AH"
     */
    void connect(QpEndpoint remote, int myPsn, Mtu mtu, int sl, int sgidIndex) throws PingpongException {
        boolean global = !remote.gid().isZero();
        int sgid = sgidIndex & 0xff;
        if (type == QpType.UD) {
            run("Failed to modify QP to RTR", qp::toRtr);
            run("Failed to modify QP to RTS", () -> qp.toRts(RtsAttributes.builder(myPsn).build()));
            ah = verb("Failed to create AH", () -> pd.createAddressHandle(new AddressHandle.Attributes(ibPort,
                    remote.lid(), sl, global, remote.gid(), sgid, 1, 0, 0)));
        } else {
            // UC takes only the state, AV, MTU, QPN and PSN of these; the rest is RC's
            RtrAttributes rtr = RtrAttributes.builder(remote).pathMtu(mtu).maxDestRdAtomic(1).minRnrTimer(12)
                    .global(global).sgidIndex(sgid).hopLimit(1).serviceLevel(sl).build();
            run("Failed to modify QP to RTR", () -> qp.toRtr(rtr));
            run("Failed to modify QP to RTS", () -> qp.toRts(RtsAttributes.builder(myPsn).timeout(14).retryCount(7)
                    .rnrRetry(7).maxRdAtomic(1).build()));
        }
        remoteQpn = remote.qpn();
    }

    /**
     * Posts up to {@code n} receives of the whole buffer, one at a time, until one is refused
     * ({@code pp_post_recv}).
     *
     * @param n how many
     * @return how many were posted
     */
    int postReceives(int n) {
        int i = 0;
        while (i < n && qp.tryPost(receive.clear().receive(RECV_WRID, mr, 0, size + headroom)) == 0) {
            i++;
        }
        return i;
    }

    /**
     * Posts one signaled send of the message, inline when the QP can take it ({@code pp_post_send}).
     *
     * @return 0, or the errno of the refusal
     */
    int postSend() {
        send.clear();
        if (type == QpType.UD) {
            send.sendTo(SEND_WRID, mr, headroom, size, ah, remoteQpn, UD_QKEY);
        } else {
            send.send(SEND_WRID, mr, 0, size);
        }
        if (inline) {
            send.inline();
        }
        return qp.tryPost(send);
    }

    /**
     * The CQ's completions, as the main loop waits for them (two at a time, as the C tools poll).
     *
     * @return the completions
     */
    PingpongCompletions completions() {
        return cq;
    }

    /**
     * What {@code -c} makes the client send: the C code sets the first byte of every page of the
     * message to {@code i / page_size % sizeof(char)}, which is always 0; the rest stays 0x7b.
     */
    void writePattern() {
        long page = pageSize();
        for (long i = 0; i < size; i += page) {
            mr.segment().set(ValueLayout.JAVA_BYTE, headroom + i, (byte) 0);
        }
    }

    /**
     * The pages of the last message received whose first byte is not what {@link #writePattern()} puts there.
     *
     * @return page numbers, in order
     */
    List<Integer> invalidPages() {
        long page = pageSize();
        List<Integer> bad = new ArrayList<>();
        for (long i = 0; i < size; i += page) {
            if (mr.segment().get(ValueLayout.JAVA_BYTE, headroom + i) != 0) {
                bad.add((int) (i / page));
            }
        }
        return bad;
    }

    /**
     * Destroys everything in the C order ({@code pp_close_ctx}), reporting the first failure.
     *
     * @throws PingpongException "Couldn't destroy QP" and so on
     */
    void closeReporting() throws PingpongException {
        destroy(qp, "Couldn't destroy QP");
        if (cq != null) {
            cq.closeReporting(); // and with -e the completion engine after it
        }
        destroy(mr, "Couldn't deregister MR");
        if (type == QpType.UD) {
            destroy(ah, "Couldn't destroy AH");
        }
        destroy(pd, "Couldn't deallocate PD");
        destroy(context, "Couldn't release context");
        send.close();
        receive.close();
    }

    /** Destroys whatever exists, after a failure: nothing more to report. */
    @Override
    public void close() {
        for (AutoCloseable r : new AutoCloseable[] {qp, cq, mr, ah, pd, context, send, receive}) {
            try {
                if (r != null) {
                    r.close();
                }
            } catch (Exception e) {
                // already failing; the first failure is the one reported
            }
        }
    }

    /** Closes {@code r} (if any), reporting a failure with the C tool's message. */
    static void destroy(AutoCloseable r, String failure) throws PingpongException {
        try {
            if (r != null) {
                r.close();
            }
        } catch (Exception e) {
            throw new PingpongException(failure, e);
        }
    }

    /** Runs a verb, turning its failure into the C tool's message. */
    static <T> T verb(String failure, Verb<T> v) throws PingpongException {
        try {
            return v.run();
        } catch (VerbsException | RuntimeException e) {
            throw new PingpongException(failure, e);
        }
    }

    private static void run(String failure, VoidVerb v) throws PingpongException {
        verb(failure, () -> {
            v.run();
            return null;
        });
    }

    /** {@code sysconf(_SC_PAGESIZE)}, from the auxiliary vector; 4096 if that cannot be read. */
    static long pageSize() {
        try {
            ByteBuffer auxv = ByteBuffer.wrap(Files.readAllBytes(Path.of("/proc/self/auxv")))
                    .order(ByteOrder.nativeOrder());
            while (auxv.remaining() >= 2 * Long.BYTES) {
                long key = auxv.getLong();
                long value = auxv.getLong();
                if (key == AT_PAGESZ && value > 0) {
                    return value;
                }
                if (key == 0) {
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or no procfs: fall through
        }
        return 4096;
    }
}
