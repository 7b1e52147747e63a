package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.CNumberConverter;
import dev.rdma4j.Device;
import dev.rdma4j.Gid;
import dev.rdma4j.Mtu;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.QpEndpoint;
import dev.rdma4j.QpType;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * What {@code ibv_rc_pingpong}, {@code ibv_uc_pingpong} and {@code ibv_ud_pingpong} (rdma-core's
 * libibverbs examples) share: their options, and their {@code main}. Without a host argument the tool is
 * the server, with one the client; the two sides exchange endpoints over TCP
 * ({@link PingpongExchange}), connect their QPs ({@link PingpongContext}), bounce {@code -n} messages of
 * {@code -s} bytes ({@link PingpongLoop}) and print the C tools' lines ({@link PingpongReport}).
 * Numbers are read as C's {@code strtol} does; out-of-range port numbers and MTUs print the usage and
 * exit 1, failures print the C tools' messages on stderr and exit 1.
 */
public abstract class PingpongCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-p", "--port"}, paramLabel = "<port>", converter = CNumberConverter.class,
            defaultValue = "18515", description = "listen on/connect to port <port> (default 18515)")
    long tcpPort;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>",
            description = "use IB device <dev> (default first device found)")
    String ibDev;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "<port>", converter = CNumberConverter.class,
            defaultValue = "1", description = "use port <port> of IB device (default 1)")
    long ibPort;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "<dep>", converter = CNumberConverter.class,
            defaultValue = "500", description = "number of receives to post at a time (default 500)")
    long rxDepth;

    @Option(names = {"-n", "--iters"}, paramLabel = "<iters>", converter = CNumberConverter.class,
            defaultValue = "1000", description = "number of exchanges (default 1000)")
    long iters;

    @Option(names = {"-l", "--sl"}, paramLabel = "<sl>", converter = CNumberConverter.class, defaultValue = "0",
            description = "service level value (default 0)")
    long sl;

    @Option(names = {"-e", "--events"}, description = "sleep on CQ events (default poll): the CQ gets a completion "
            + "channel, a completion-engine thread arms it and sleeps in epoll until a CQ event, and the main loop "
            + "blocks until that thread hands it the completions")
    boolean events;

    @Option(names = {"-g", "--gid-idx"}, paramLabel = "<gid index>", converter = CNumberConverter.class,
            defaultValue = "-1", description = "local port gid index (RoCE needs one, e.g. -g 1 on Soft-RoCE)")
    long gidIndex;

    @Option(names = {"-c", "--chk"}, description = "validate received buffer")
    boolean validate;

    @Parameters(arity = "0..1", paramLabel = "<host>",
            description = "connect to the server at <host>; without it, start a server and wait for connection")
    String host;

    /**
     * The transport.
     *
     * @return RC, UC or UD
     */
    abstract QpType type();

    /**
     * {@code -s}: its default differs between the tools.
     *
     * @return the message size as given
     */
    abstract long size();

    /**
     * {@code -m} of the connected tools, {@code null} for UD.
     *
     * @return the path MTU
     * @throws IllegalArgumentException if the value is not an MTU
     */
    abstract Mtu pathMtu();

    /**
     * An option this tool accepts but rdma4j cannot honour yet.
     *
     * @return why it is refused, or {@code null}
     */
    String refusedOption() {
        return null;
    }

    @Override
    public final Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return run(out);
        } catch (PingpongException e) {
            out.flush();
            err.println(e.getMessage());
            if (System.getenv("RDMA4J_DEBUG") != null && e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * The C tool's {@code main} after option parsing.
     *
     * @param out stdout
     * @return the exit status
     * @throws PingpongException with the C tool's messages, for stderr and exit status 1
     */
    int run(PrintWriter out) throws PingpongException {
        String refused = refusedOption();
        if (refused != null) {
            throw new PingpongException(spec.name() + ": " + refused);
        }
        long port = tcpPort & 0xffffffffL; // unsigned int
        int ib = (int) ibPort;
        Mtu mtu;
        try {
            mtu = pathMtu();
        } catch (IllegalArgumentException e) {
            mtu = null;
        }
        if (port > 65535 || ib < 1 || (mtu == null && type() != QpType.UD)) {
            spec.commandLine().usage(out);
            return 1;
        }
        boolean client = host != null;
        long size = size() & 0xffffffffL;
        long n = iters & 0xffffffffL;
        int depth = (int) rxDepth;
        int gidx = (int) gidIndex;
        Device device = device();

        try (PingpongContext pp = PingpongContext.open(type(), device, size, depth, ib, events)) {
            int routs = pp.postReceives(depth);
            if (routs < depth) {
                throw new PingpongException("Couldn't post receive (" + routs + ")");
            }
            PortAttributes portInfo = pp.queryPort();
            if (type() != QpType.UD && !portInfo.isRoce() && portInfo.lid() == 0) {
                throw new PingpongException("Couldn't get local LID");
            }
            Gid gid = gidx < 0 ? Gid.ZERO : pp.queryGid(gidx, type() == QpType.UD
                    ? "Could not get local gid for gid index " + gidx : "can't read sgid of index " + gidx);
            QpEndpoint local = new QpEndpoint(portInfo.lid(), pp.qpNumber(),
                    ThreadLocalRandom.current().nextInt() & 0xffffff, gid);
            out.println(PingpongReport.localAddress(local, type() == QpType.UD));
            out.flush();

            Mtu pathMtu = mtu;
            int serviceLevel = (int) sl;
            QpEndpoint remote = client ? PingpongExchange.client(host, (int) port, local)
                    : PingpongExchange.server((int) port, local,
                            r -> pp.connect(r, local.psn(), pathMtu, serviceLevel, gidx));
            out.println(PingpongReport.remoteAddress(remote));
            out.flush();
            if (client) {
                pp.connect(remote, local.psn(), pathMtu, serviceLevel, gidx);
            }

            PingpongLoop loop = new PingpongLoop(pp, n, depth, routs, type() == QpType.RC);
            if (client && validate) {
                pp.writePattern();
            }
            loop.start(client);
            long start = System.nanoTime();
            loop.run();
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
     * The device {@code -d} names, or the first one.
     *
     * @return the device
     * @throws PingpongException "IB device X not found" and the like
     */
    Device device() throws PingpongException {
        List<Device> devices;
        try {
            devices = Device.list();
        } catch (Exception e) {
            throw new PingpongException("Failed to get IB devices list: " + e.getMessage(), e);
        }
        if (ibDev == null) {
            if (devices.isEmpty()) {
                throw new PingpongException("No IB devices found");
            }
            return devices.getFirst();
        }
        return devices.stream().filter(d -> d.name().equals(ibDev)).findFirst()
                .orElseThrow(() -> new PingpongException("IB device " + ibDev + " not found"));
    }
}
