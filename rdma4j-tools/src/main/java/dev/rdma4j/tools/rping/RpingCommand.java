package dev.rdma4j.tools.rping;

import dev.rdma4j.VerbsException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j rping}: librdmacm's {@code rping} (rdma-core 44) on rdma4j, the same protocol on the wire,
 * the same lines on stdout and stderr and the same exit statuses, interoperable with it in both roles.
 *
 * <p>The client connects with rdma_cm and does {@code -C} pings (no end without it): it sends the
 * descriptor of a buffer holding {@code "rdma-ping-N: "} and a rotating pattern, the server RDMA-reads
 * it, the client sends the descriptor of a second buffer and the server RDMA-writes the data back. The
 * server serves one client, whatever its {@code -C}, and exits when that client disconnects; with
 * {@code -P} it serves any number, concurrently, until killed.
 *
 * <p>As in the C tool, numbers are read with {@code atoi}, each option may be given again (the last
 * value counts), an unknown option or a missing {@code -s}/{@code -c} exits with {@code EINVAL} (22),
 * a bad {@code -S} or {@code -C} too, an unresolvable {@code -a} or {@code -I} with 254. {@code -I} (the
 * client's source address) binds the client's rdma_cm id to it ({@code rdma_bind_addr}) before resolving;
 * the server ignores it, as the C tool does. {@code -q} (a QP created by the tool rather than by {@code rdma_create_qp}) is accepted and has
 * no effect: rdma4j always lets rdma_cm create and drive the QP, which is the same on the wire.
 */
@Command(name = "rping", sortOptions = false, separator = " ", exitCodeOnInvalidInput = 22, exitCodeOnUsageHelp = 0,
        description = {"RDMA ping-pong over rdma_cm, like librdmacm's rping (same protocol, interoperable).",
                "  rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]",
                "  rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]"})
public final class RpingCommand implements Callable<Integer> {
    /** {@code EINVAL}: the C tool's status for bad options. */
    static final int EINVAL = 22;
    /** The C tool's status for an unresolvable {@code -a}: {@code EAI_NONAME} (-2) as an exit status. */
    static final int EAI_NONAME_STATUS = 254;
    /** The status when the calling thread is interrupted (as for SIGINT). */
    static final int INTERRUPTED = 130;

    @Spec
    CommandSpec spec;

    @Option(names = "-s", description = "server side. To bind to any address with IPv6 use -a ::0")
    boolean[] server;

    @Option(names = "-c", description = "client side")
    boolean[] client;

    @Option(names = "-a", paramLabel = "addr", description = "address")
    List<String> address;

    @Option(names = "-p", paramLabel = "port", description = "port (default 7174)")
    List<String> port;

    @Option(names = "-C", paramLabel = "count", description = "ping count times (client; default 0: no end)")
    List<String> count;

    @Option(names = "-S", paramLabel = "size", description = "ping data size (default 64, 23 to 65535)")
    List<String> size;

    @Option(names = "-v", description = "display ping data to stdout")
    boolean[] verbose;

    @Option(names = "-V", description = "validate ping data")
    boolean[] validate;

    @Option(names = "-d", description = "debug printfs")
    boolean[] debug;

    @Option(names = "-P", description = "persistent server mode allowing multiple connections")
    boolean[] persistent;

    @Option(names = "-q", description = "use self-created, self-modified QP (accepted; rdma4j always lets "
            + "rdma_cm create and move the QP, which is the same on the wire)")
    boolean[] selfCreatedQp;

    @Option(names = "-I", paramLabel = "addr",
            description = "source address to bind to for client")
    List<String> source;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    /** Like getopt, the C tool ignores operands. */
    @Parameters(hidden = true)
    List<String> operands;

    /** For picocli. */
    public RpingCommand() {
    }

    @Override
    public Integer call() throws VerbsException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return run(out, err) & 0xff;
        } catch (InterruptedException e) {
            // only in-process (tests); from a shell, SIGINT ends the JVM with this status too
            Thread.currentThread().interrupt();
            return INTERRUPTED;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private int run(PrintWriter out, PrintWriter err) throws VerbsException, InterruptedException {
        int ret = 0;
        int pingSize = RpingOptions.DEFAULT_SIZE;
        for (String s : list(size)) {
            pingSize = atoi(s);
            if (pingSize < RpingOptions.MIN_SIZE || pingSize > RpingOptions.MAX_SIZE) {
                err.printf("Invalid size %d (valid range is %d to %d)%n", pingSize, RpingOptions.MIN_SIZE,
                        RpingOptions.MAX_SIZE + 1);
                ret = EINVAL;
            }
        }
        int pings = 0;
        for (String s : list(count)) {
            pings = atoi(s);
            if (pings < 0) {
                err.printf("Invalid count %d%n", pings);
                ret = EINVAL;
            }
        }
        InetAddress addr = null;
        for (String a : list(address)) {
            try {
                addr = InetAddress.getByName(a);
            } catch (UnknownHostException e) {
                out.println("getaddrinfo failed (Name or service not known) - invalid hostname or IP address");
                ret = EAI_NONAME_STATUS;
            }
        }
        InetAddress sourceAddr = null;
        for (String a : list(source)) {
            try {
                sourceAddr = InetAddress.getByName(a);
            } catch (UnknownHostException e) {
                out.println("getaddrinfo failed (Name or service not known) - invalid hostname or IP address");
                ret = EAI_NONAME_STATUS;
            }
        }
        if (ret != 0) {
            return ret;
        }
        if (server == null && client == null) {
            spec.commandLine().usage(out);
            return EINVAL;
        }
        if (server != null && client != null) {
            err.println("rping: give either -s or -c");
            return EINVAL;
        }
        if (addr == null) {
            try {
                addr = InetAddress.getByAddress(new byte[4]); // the C tool's zeroed sockaddr_in
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
        int tcpPort = port == null ? RpingOptions.DEFAULT_PORT : atoi(port.getLast()) & 0xffff; // htobe16
        RpingOptions options = new RpingOptions(server != null, persistent != null, addr, sourceAddr, tcpPort, pings,
                pingSize, verbose != null, validate != null, debug != null);
        return new RpingRunner(options, out, err).run();
    }

    private static List<String> list(List<String> values) {
        return values == null ? List.of() : values;
    }

    /**
     * C's {@code atoi}: see {@link dev.rdma4j.tools.CNumberConverter#atoi}.
     *
     * @param s the text
     * @return the number
     */
    static int atoi(String s) {
        return dev.rdma4j.tools.CNumberConverter.atoi(s);
    }
}
