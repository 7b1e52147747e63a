package dev.rdma4j.tools.datagram;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.AddressHandle;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.SendBatch;
import dev.rdma4j.UdDestination;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.CmDatagram;
import dev.rdma4j.connect.ConnectionSetup;
import java.io.PrintWriter;
import java.util.concurrent.locks.LockSupport;

/**
 * One of the C tools' {@code struct cmatest_node}: a {@link CmDatagram} with its PD, CQ and message buffer (one
 * buffer of {@code size} bytes plus the 40 of a GRH, which every receive and send uses, as in C), and where its
 * datagrams go.
 *
 * <p>Threading: built on the engine thread (the active side's setup) or the tool's; used by the tool's thread.
 */
final class DatagramNode implements AutoCloseable {
    private static final int GRH = QueuePair.UD_GRH_BYTES;

    private final String tool;
    private final PrintWriter out;
    private final int size;
    private final int count;
    private volatile ProtectionDomain pd;
    private volatile CompletionQueue cq;
    private volatile MemoryRegion mr;
    volatile CmDatagram datagram;
    volatile UdDestination destination;
    /** The server's reply handle ({@code ibv_create_ah_from_wc}), owned by the node. */
    private AddressHandle replyHandle;
    private final WorkCompletions wcs = new WorkCompletions(8);
    /** Completions seen so far, of receives and of (signaled) sends. */
    private int received;
    private int sent;

    DatagramNode(String tool, PrintWriter out, int size, int count) {
        this.tool = tool;
        this.out = out;
        this.size = size;
        this.count = count;
    }

    /** The C tools' {@code verify_test_params}, {@code init_node} and (when asked) {@code post_recvs}. */
    ConnectionSetup setup(boolean postReceives) {
        return new ConnectionSetup() {
            @Override
            public QueuePairBuilder configure(Context ctx) throws VerbsException {
                int mtu = ctx.queryPort(1).activeMtu().bytes();
                if (count > 0 && size > mtu) {
                    out.printf("%s: message_size %d is larger than active mtu %d%n", tool, size, mtu);
                    throw new MessageTooLarge();
                }
                pd = ctx.allocateProtectionDomain();
                cq = ctx.createCompletionQueue(count > 0 ? count * 2 : 2);
                if (count > 0) {
                    mr = pd.allocate(size + GRH, AccessFlag.LOCAL_WRITE);
                }
                int wr = count > 0 ? count : 1;
                return QueuePair.builder(pd, QpType.UD).completionQueue(cq).capacity(wr, wr).maxSge(1, 1);
            }

            @Override
            public void beforeConnect(QueuePair qp) throws VerbsException {
                if (postReceives) {
                    for (int i = 0; i < count; i++) {
                        qp.postReceive(i, mr, 0, size + GRH);
                    }
                }
            }
        };
    }

    /** {@code verify_test_params} refused: the C tools' {@code -EINVAL}. */
    static final class MessageTooLarge extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        MessageTooLarge() {
            super("message size larger than the active MTU");
        }
    }

    boolean connected() {
        return destination != null;
    }

    /**
     * {@code post_sends}: {@code count} sends with immediate data (this queue pair's number) to the destination;
     * {@code signalAll} as the server's replies, else only the last is signaled and awaited, so that every datagram
     * left before the caller goes on (the C tools post them unsignaled and may tear down before they are sent).
     *
     * @return 0, or what {@link #poll} returned for the last send
     */
    int postSends(boolean signalAll) throws VerbsException {
        if (!connected() || count == 0) {
            return 0;
        }
        QueuePair qp = datagram.queuePair();
        try (SendBatch b = new SendBatch(1, 1)) {
            for (int i = 0; i < count; i++) {
                b.clear().sendWithImmediate(i, mr, 0, size, qp.qpNumber()).to(destination);
                if (!signalAll && i < count - 1) {
                    b.unsignaled();
                }
                qp.post(b);
            }
        }
        return signalAll ? 0 : poll(1, false);
    }

    /**
     * Polls until {@code n} completions of the kind asked (receives, or sends) arrived since the node was made,
     * counting those of the other kind for a later call, and making the reply's address handle from the first
     * receive when there is no destination yet ({@code create_reply_ah}).
     *
     * @return 0, or a negative value when a completion failed or the reply handle could not be made
     */
    int poll(int n, boolean receives) throws VerbsException {
        while ((receives ? received : sent) < n) {
            int got = cq.poll(wcs);
            if (got == 0) {
                LockSupport.parkNanos(20_000);
                continue;
            }
            for (int i = 0; i < got; i++) {
                WorkCompletion wc = wcs.get(i);
                if (!wc.isSuccess()) {
                    out.printf("%s: completion failed: %s%n", tool, wc.status());
                    return -1;
                }
                if (!wc.isReceive()) {
                    sent++;
                    continue;
                }
                received++;
                if (destination == null) {
                    try {
                        replyHandle = pd.createAddressHandle(wc, mr.segment().asSlice(0, GRH), 1);
                    } catch (VerbsException e) {
                        out.printf("%s: failed to create reply AH%n", tool);
                        return -1;
                    }
                    destination = new UdDestination(replyHandle, wc.immediateData() & 0xFFFFFF, CmDatagram.QKEY);
                }
            }
        }
        return 0;
    }

    /** {@code destroy_node}: the datagram (its queue pair and handles), then the node's handle, buffer, CQ, PD. */
    @Override
    public void close() {
        CmDatagram d = datagram;
        if (d != null) {
            d.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {replyHandle, mr, cq, pd}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    out.printf("%s: %s%n", tool, e.getMessage());
                }
            }
        }
    }
}
