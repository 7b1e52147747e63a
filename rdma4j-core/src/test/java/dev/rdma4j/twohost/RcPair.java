package dev.rdma4j.twohost;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.AsyncEvent;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.TestDevice;
import dev.rdma4j.WorkCompletion;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.connect.EndpointExchange;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One side of an RC connection across the wire made with the plain verbs (busy-polled, no engine):
 * endpoints exchanged over TCP ({@link EndpointExchange}), RoCE v2 GID index 1 (the IPv4 one), the
 * transport timeout, retry count, RNR retry and minimum RNR timer chosen by the test. Collects the
 * context's async events (port up/down) as {@link #processEvents()} dispatches them.
 */
final class RcPair implements AutoCloseable {
    static final int GID_INDEX = 1;

    final Context ctx;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion region;
    final WorkCompletions wcs = new WorkCompletions(64);
    final List<AsyncEvent> events = new CopyOnWriteArrayList<>();

    /**
     * @param port       TCP port of the endpoint exchange (host 1 listens)
     * @param depth      send and receive queue capacity
     * @param regionSize registered memory, all remote access
     * @param timeout    the QP's local ACK timeout (4.096 µs × 2^timeout)
     * @param retry      transport retry count
     * @param rnrRetry   RNR retry count (7: infinite)
     * @param minRnr     the minimum RNR NAK timer code this side asks its peer to wait
     */
    RcPair(int port, int depth, int regionSize, int timeout, int retry, int rnrRetry, int minRnr)
            throws IOException {
        ctx = TestDevice.device().open();
        ctx.addAsyncEventListener(events::add);
        pd = ctx.allocateProtectionDomain();
        cq = ctx.createCompletionQueue(2 * depth);
        qp = QueuePair.builder(pd, QpType.RC).completionQueue(cq).capacity(depth, depth).build();
        region = pd.allocate(regionSize, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ);
        int psn = TwoHost.host() * 0x1000;
        QpEndpoint mine = qp.localEndpoint(psn, GID_INDEX);
        EndpointExchange.Offer offer = EndpointExchange.Offer.of(mine, region.remote());
        EndpointExchange.Offer peer;
        if (TwoHost.isServer()) {
            try (ServerSocket ss = new ServerSocket()) {
                ss.setReuseAddress(true);
                ss.bind(new InetSocketAddress(InetAddress.getByName(TwoHost.addr()), port));
                peer = EndpointExchange.accept(ss, offer, TwoHost.BARRIER);
            }
        } else {
            peer = connectRetrying(port, offer);
        }
        remote = peer.regions().get(0);
        qp.toInit();
        qp.toRtr(RtrAttributes.builder(peer.endpoint()).sgidIndex(GID_INDEX).minRnrTimer(minRnr).build());
        qp.toRts(RtsAttributes.builder(psn).timeout(timeout).retryCount(retry).rnrRetry(rnrRetry).build());
    }

    final dev.rdma4j.RemoteRegion remote;

    private static EndpointExchange.Offer connectRetrying(int port, EndpointExchange.Offer offer) throws IOException {
        long deadline = System.nanoTime() + TwoHost.BARRIER.toNanos();
        while (true) {
            try {
                return EndpointExchange.connect(TwoHost.peerAt(port), offer, TwoHost.BARRIER);
            } catch (java.net.ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException(ie);
                }
            }
        }
    }

    /** The transport retry budget of a QP: 4.096 µs × 2^timeout per try, retry + 1 tries. */
    static Duration retryBudget(int timeout, int retry) {
        return Duration.ofNanos((long) (4096.0 * Math.pow(2, timeout) * (retry + 1)));
    }

    void processEvents() {
        ctx.processAsyncEvents();
    }

    /** Polls until {@code n} completions arrived or {@code within} passed; dispatches async events meanwhile. */
    List<WorkCompletion> await(int n, Duration within) throws IOException {
        List<WorkCompletion> out = new ArrayList<>();
        long deadline = System.nanoTime() + within.toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                out.add(wcs.get(i));
            }
            if (got == 0) {
                processEvents();
                Thread.onSpinWait();
            }
        }
        return out;
    }

    List<WorkCompletion> awaitAll(int n, Duration within) throws IOException {
        List<WorkCompletion> out = await(n, within);
        assertThat(out).as("%d completions within %s", n, within).hasSize(n);
        return out;
    }

    @Override
    public void close() {
        qp.close();
        region.close();
        cq.close();
        wcs.close();
        pd.close();
        ctx.close();
    }
}
