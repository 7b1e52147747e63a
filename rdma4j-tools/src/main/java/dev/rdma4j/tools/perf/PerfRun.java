package dev.rdma4j.tools.perf;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.DeviceAttributes;
import dev.rdma4j.InitAttributes;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.RtrAttributes;
import dev.rdma4j.RtsAttributes;
import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.EndpointExchange;
import dev.rdma4j.tools.BoundedInput;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * One {@code rdma4j perf} run: opens the device, agrees with the peer over TCP (the parameters, then each QP's
 * endpoint and the region through {@link EndpointExchange}), connects the QPs, runs the warm-up and each size
 * between barriers ({@link EndpointExchange#sync}) and prints the table ({@link PerfReport}); the loops are
 * {@link PerfLoops}.
 *
 * <p>The buffer: one region of {@code 2 * M} bytes, {@code M} the largest size rounded up to 64: this side's
 * messages come from {@code [0, M)}, the peer's writes, sends and atomics land in {@code [M, 2M)}.
 */
final class PerfRun {
    private final PerfParameters p;
    private final PrintWriter out;

    PerfRun(PerfParameters p, PrintWriter out) {
        this.p = p;
        this.out = out;
    }

    void run() throws PerfException {
        Device device;
        try {
            device = Device.byNameOrDefault(p.device());
        } catch (VerbsException | RuntimeException e) {
            throw new PerfException(p.device() == null ? "no RDMA device" : "IB device " + p.device() + " not found", e);
        }
        long m = (p.maxSize() + 63) & ~63L;
        List<QueuePair> qps = new ArrayList<>();
        try (Context ctx = verb("Couldn't get context for " + device.name(), device::open);
             ProtectionDomain pd = verb("Couldn't allocate PD", ctx::allocateProtectionDomain);
             MemoryRegion mr = verb("Couldn't allocate and register " + 2 * m + " bytes", () -> pd.allocate(2 * m,
                     AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
                     AccessFlag.REMOTE_ATOMIC));
             PerfCompletions cq = verb("Couldn't create CQ", () -> PerfCompletions.open(ctx, cqEntries(), p.mode()));
             Socket socket = connect()) {
            try {
                runConnected(device, ctx, pd, mr, cq, socket, m, qps);
            } finally {
                for (QueuePair qp : qps) { // before the CQ they use
                    qp.close();
                }
            }
        } catch (IOException e) {
            throw new PerfException("TCP connection to the peer failed", e);
        }
    }

    private void runConnected(Device device, Context ctx, ProtectionDomain pd, MemoryRegion mr, PerfCompletions cq,
            Socket socket, long m, List<QueuePair> qps) throws PerfException {
        {
            PortAttributes port = verb("Couldn't query port " + p.ibPort(), () -> ctx.queryPort(p.ibPort()));
            DeviceAttributes attrs = verb("Couldn't query device", ctx::queryDevice);
            int reads = Math.max(1, Math.min(16, Math.min(attrs.maxQpRdAtom(), attrs.maxQpInitRdAtom())));
            boolean sends = p.test().verb() == PerfKind.Verb.SEND;
            for (int i = 0; i < p.qps(); i++) {
                QueuePair qp = verb("Couldn't create QP", () -> {
                    QueuePairBuilder b = QueuePair.builder(pd, QpType.RC).completionQueue(cq.queue())
                            .capacity(p.txDepth(), sends ? p.rxDepth() : 1).maxSge(1, 1).maxInlineData(p.inline())
                            .signalAll(false);
                    return (p.wrApi() ? b.extendedPosting() : b).build();
                });
                qps.add(qp);
                verb("Failed to modify QP to INIT", () -> {
                    qp.toInit(InitAttributes.builder().port(p.ibPort()).access(AccessFlag.LOCAL_WRITE,
                            AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ, AccessFlag.REMOTE_ATOMIC).build());
                    return null;
                });
            }
            int granted = qps.getFirst().capabilities().maxInlineData();
            // the set-up (parameters, endpoints) within a deadline: a silent or slow-loris peer cannot hold the
            // server; the barriers between sizes wait as long as the peer measures (no timeout)
            io("Couldn't set the socket's timeout", () -> {
                socket.setSoTimeout((int) BoundedInput.SERVER_TIMEOUT.toMillis());
                return null;
            });
            agree(socket);
            List<RemoteRegion> remotes = new ArrayList<>();
            List<String> addresses = new ArrayList<>();
            for (QueuePair qp : qps) {
                int psn = ThreadLocalRandom.current().nextInt() & 0xffffff;
                QpEndpoint local = verb("Couldn't read the local GID", () -> p.gidIndex() >= 0
                        ? qp.localEndpoint(psn, p.gidIndex()) : qp.localEndpoint(psn));
                EndpointExchange.Offer peer = io("Couldn't exchange endpoints", () -> EndpointExchange.exchange(socket,
                        EndpointExchange.Offer.of(local, mr.remote())));
                if (peer.regions().size() != 1 || peer.regions().getFirst().length() != 2 * m) {
                    throw new PerfException("the peer offers " + peer.regions() + ", expected one region of "
                            + 2 * m + " bytes");
                }
                RtrAttributes.Builder rtr = RtrAttributes.builder(peer.endpoint()).maxDestRdAtomic(reads);
                if (p.gidIndex() >= 0) {
                    rtr.sgidIndex(p.gidIndex());
                }
                verb("Failed to modify QP to RTR", () -> {
                    qp.toRtr(rtr.build());
                    return null;
                });
                verb("Failed to modify QP to RTS", () -> {
                    qp.toRts(RtsAttributes.builder(psn).maxRdAtomic(reads).build());
                    return null;
                });
                remotes.add(peer.regions().getFirst());
                addresses.addAll(PerfReport.address(true, local, mr.remote()));
                addresses.addAll(PerfReport.address(false, peer.endpoint(), peer.regions().getFirst()));
            }
            PerfReport.Setup setup = new PerfReport.Setup(device.name(), port.isRoce() ? "Ethernet" : "IB",
                    port.activeMtu().bytes(), granted);
            PerfReport.banner(p, setup).forEach(out::println);
            addresses.forEach(out::println);
            out.println(PerfReport.LINE);
            out.flush();
            io("Couldn't set the socket's timeout", () -> {
                socket.setSoTimeout(0);
                return null;
            });
            try (PerfLoops loops = new PerfLoops(p, qps, mr, m, remotes, cq, granted, socket)) {
                if (p.icountMarks() != null) { // scripts/perf-compare --icount
                    InstructionMarks marks = InstructionMarks.load(p.icountMarks());
                    if (p.isClient()) {
                        loops.markWith(marks);
                    } else {
                        loops.markSpinsWith(marks);
                    }
                }
                loops.postReceives();
                sync(socket);
                List<Object> rows = measure(loops, socket);
                if (reports()) {
                    write(setup, rows);
                }
            }
        }
    }

    /** The warm-up, then each size: rows printed as they come. */
    private List<Object> measure(PerfLoops loops, Socket socket) throws PerfException {
        boolean report = reports();
        WindowWatch watch = new WindowWatch();
        if (p.warmup() > 0) {
            long size = p.sizes().getFirst();
            Warmup.Result w = new Warmup().run(() -> loops.run(size, p.warmup(), 0, false), p.warmup(),
                    p.warmupSeconds(), socket);
            watch.before(); // before the barrier: no side's window is open
            sync(socket);
            out.println(PerfReport.warmup(w, size));
        } else {
            watch.before();
        }
        String clock = PerfReport.clockWarning(PerfReport.clockSource(PerfReport.CLOCK_SOURCE));
        if (clock != null) {
            out.println(clock);
        }
        if (report) {
            out.println(PerfReport.header(p));
        }
        out.flush();
        List<Object> rows = new ArrayList<>();
        for (long size : p.sizes()) {
            Object ran = loops.run(size, p.iterationsFor(size), p.duration(), true);
            sync(socket); // both loops ended: the rows' reckoning falls in neither side's measured window
            String disturbed = watch.after(p.isClient() ? "client" : "server");
            if (disturbed != null && p.icountMarks() != null) { // said to the instrument only: perftest's output else
                out.println(disturbed);
            }
            Object row = loops.row(ran);
            if (report) {
                out.println(row instanceof PerfResults.Latency l ? PerfReport.row(l, p.duration() > 0)
                        : PerfReport.row((PerfResults.Bandwidth) row));
                out.flush();
                rows.add(row);
            }
        }
        out.println(PerfReport.LINE);
        out.flush();
        return rows;
    }

    private boolean reports() {
        return p.isClient() || p.test().serverReports();
    }

    private void write(PerfReport.Setup setup, List<Object> rows) throws PerfException {
        try {
            if (p.json() != null) {
                Files.writeString(p.json(), PerfReport.json(p, setup, rows));
            }
            if (p.plot() != null) {
                PerfPlot.write(p.plot(), "rdma4j perf " + p.test().cliName() + " on " + setup.device()
                        + " (" + p.completionMode() + ")", rows, p.gbits());
            }
        } catch (IOException | RuntimeException e) {
            throw new PerfException("Couldn't write the results", e);
        }
    }

    private int cqEntries() {
        int sends = p.qps() * p.txDepth();
        return sends + (p.test().verb() == PerfKind.Verb.SEND ? p.qps() * p.rxDepth() : 0) + 1;
    }

    /** The client connects (retrying while the server is not listening yet), the server accepts one client. */
    private Socket connect() throws PerfException {
        try {
            if (!p.isClient()) {
                try (ServerSocket server = new ServerSocket()) {
                    server.setReuseAddress(true);
                    server.bind(new InetSocketAddress(p.tcpPort()), 1);
                    Socket s = server.accept();
                    s.setTcpNoDelay(true);
                    return s;
                }
            }
            return connectRetrying(new InetSocketAddress(p.host(), p.tcpPort()), p.connectSeconds());
        } catch (IOException e) {
            throw new PerfException(p.isClient() ? "Couldn't connect to " + p.host() + ":" + p.tcpPort()
                    : "Couldn't listen to port " + p.tcpPort(), e);
        }
    }

    /**
     * Connects to {@code server}, retrying every 100 ms while nothing listens there (connection refused), for up to
     * {@code seconds}.
     *
     * @param server  the server's address
     * @param seconds how long to retry; 0 tries once
     * @return the connected socket, with {@code TCP_NODELAY}
     * @throws IOException the last refusal once the time is up, or any other failure at once
     */
    static Socket connectRetrying(InetSocketAddress server, int seconds) throws IOException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(server);
                s.setTcpNoDelay(true);
                return s;
            } catch (ConnectException e) {
                s.close();
                if (System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                LockSupport.parkNanos(100_000_000); // the server is not listening yet
            }
        }
    }

    /** Both sides send their parameters and check the peer's: they must run the same test the same way. */
    private void agree(Socket socket) throws PerfException {
        String mine = p.agreement();
        String theirs = io("Couldn't exchange parameters", () -> {
            DataOutputStream o = new DataOutputStream(socket.getOutputStream());
            o.writeUTF(mine);
            o.flush();
            return new DataInputStream(new BoundedInput(socket, BoundedInput.SERVER_TIMEOUT)).readUTF();
        });
        if (!mine.equals(theirs)) {
            throw new PerfException("the peer runs '" + theirs + "', this side '" + mine
                    + "': both sides need the same test and options");
        }
    }

    static void sync(Socket socket) throws PerfException {
        io("the peer left", () -> {
            EndpointExchange.sync(socket);
            return null;
        });
    }

    @FunctionalInterface
    interface Verb<T> {
        T run() throws VerbsException;
    }

    @FunctionalInterface
    interface Io<T> {
        T run() throws IOException;
    }

    static <T> T verb(String failure, Verb<T> v) throws PerfException {
        try {
            return v.run();
        } catch (VerbsException | RuntimeException e) {
            throw new PerfException(failure, e);
        }
    }

    static <T> T io(String failure, Io<T> v) throws PerfException {
        try {
            return v.run();
        } catch (IOException e) {
            // say what went wrong with the peer (timed out, closed after N bytes, bad magic, ...)
            throw new PerfException(failure + ": " + e, e);
        }
    }
}
