package dev.rdma4j.tools.datagram;

import dev.rdma4j.VerbsException;
import dev.rdma4j.tools.CNumberConverter;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmDatagram;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmException;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.connect.CmPortSpace;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j udaddy}: rdmacm-utils' {@code udaddy} (rdma-core 44) on rdma4j: UD queue pairs over rdma_cm, the
 * client resolving the server's by SIDR ({@code rdma_connect} on an {@code RDMA_PS_UDP} id), {@code -C} datagrams
 * of {@code -S} bytes with immediate data from the client, as many back from the server to the address it learns
 * from the first ({@code ibv_create_ah_from_wc}); the same lines and exit status as the C tool, interoperable with
 * it in both roles.
 *
 * <p>Options as in C: {@code -s} server address (client mode), {@code -b} bind address, {@code -c} connections,
 * {@code -C} message count, {@code -S} message size, numbers read with {@code atoi}; the port is the C tool's,
 * 7174. {@code -t} (type of service), {@code -f gid}, {@code -P ipoib} and a {@code -p} port space other than UDP's
 * are refused with a message and status 1: rdma4j sets no rdma_cm option and does not address AF_IB. One
 * difference on purpose: the client's datagrams are sent unsignaled as in C but the last is signaled and awaited
 * before the tool goes on, so none is lost as it tears down.
 */
@Command(name = "udaddy", sortOptions = false, separator = " ", exitCodeOnInvalidInput = 1, exitCodeOnUsageHelp = 0,
        description = {"UD over rdma_cm, like rdmacm-utils' udaddy (interoperable).",
                "  udaddy [-b bind_address] [-c connections] [-C message_count] [-S message_size]",
                "  udaddy -s server_address [...]"})
public final class UdaddyCommand implements Callable<Integer> {
    /** The C tools' port. */
    static final int PORT = 7174;
    private static final Duration RESOLVE = Duration.ofMillis(2000);
    private static final Duration WHOLE = Duration.ofMinutes(5);

    @Spec
    CommandSpec spec;

    @Option(names = "-s", paramLabel = "server_address", description = "server address: run as the client")
    String server;

    @Option(names = "-b", paramLabel = "bind_address", description = "bind address")
    String bind;

    @Option(names = "-c", paramLabel = "connections", description = "connections (default 1)")
    String connections = "1";

    @Option(names = "-C", paramLabel = "message_count", description = "message count (default 10)")
    String count = "10";

    @Option(names = "-S", paramLabel = "message_size", description = "message size (default 100)")
    String size = "100";

    @Option(names = "-t", paramLabel = "type_of_service", description = "type of service (refused: rdma4j sets no"
            + " rdma_cm option)")
    String tos;

    @Option(names = "-f", paramLabel = "address_format", description = "name or ip (gid is refused)")
    String format;

    @Option(names = "-P", paramLabel = "port_space", description = "udp (ipoib is refused)")
    String portSpace;

    @Option(names = "-p", paramLabel = "port_space", description = "0x111 for UDP (the default; others refused)")
    String portSpaceNumber;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    /** For picocli. */
    public UdaddyCommand() {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try {
            String refused = refused();
            if (refused != null) {
                spec.commandLine().getErr().println("rdma4j udaddy: " + refused);
                return 1;
            }
            int ret = run(out, Math.max(0, CNumberConverter.atoi(connections)), CNumberConverter.atoi(count),
                    CNumberConverter.atoi(size));
            return ret & 0xff;
        } finally {
            out.flush();
        }
    }

    private String refused() {
        if (tos != null) {
            return "-t (RDMA_OPTION_ID_TOS) is not supported";
        }
        if (format != null && format.regionMatches(true, 0, "gid", 0, 3)) {
            return "-f gid (AF_IB addresses) is not supported";
        }
        if (portSpace != null && portSpace.regionMatches(true, 0, "ipoib", 0, 5)) {
            return "-P ipoib is not supported";
        }
        if (portSpaceNumber != null && new CNumberConverter().convert(portSpaceNumber) != CmPortSpace.UDP.code()) {
            return "-p " + portSpaceNumber + ": only the UDP port space (0x111) is supported";
        }
        return null;
    }

    private int run(PrintWriter out, int connections, int count, int size) throws Exception {
        int messages = size == 0 ? 0 : count;
        List<DatagramNode> nodes = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            nodes.add(new DatagramNode("udaddy", out, size, messages));
        }
        int ret;
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            try {
                ret = server != null ? client(out, channel, nodes, messages) : server(out, channel, nodes, messages);
                out.println("test complete");
            } finally {
                nodes.forEach(DatagramNode::close);
            }
        } catch (UnknownHostException e) {
            out.println("udaddy: getaddrinfo error: Name or service not known");
            out.println("test complete");
            ret = -2;
        }
        out.printf("return status %d%n", ret);
        return ret;
    }

    private int server(PrintWriter out, CmEventChannel channel, List<DatagramNode> nodes, int messages)
            throws Exception {
        out.println("udaddy: starting server");
        InetAddress local = bind != null ? InetAddress.getByName(bind) : InetAddress.getByAddress(new byte[4]);
        int ret = 0;
        try (CmListener listener = CmListener.listen(channel, new InetSocketAddress(local, PORT), 0,
                CmPortSpace.UDP)) {
            int index = 0;
            for (int left = nodes.size(); left > 0; left--) { // connect_events
                CmConnectionRequest r = listener.nextRequestAsync().get();
                DatagramNode node = nodes.get(index++);
                try {
                    node.datagram = r.acceptDatagramAsync(node.setup(true), new byte[0]).get();
                    node.destination = null; // learnt from its first datagram
                } catch (ExecutionException e) {
                    out.println("udaddy: failing connection request");
                }
            }
            List<DatagramNode> accepted = nodes.stream().filter(n -> n.datagram != null).toList();
            if (messages > 0) {
                out.println("receiving data transfers");
                ret = pollAll(accepted, messages, true);
                if (ret == 0) {
                    out.println("sending replies");
                    for (DatagramNode n : accepted) {
                        ret = ret != 0 ? ret : n.postSends(true);
                    }
                    ret = pollAll(accepted, messages, false);
                }
                if (ret == 0) {
                    out.println("data transfers complete");
                }
            }
        }
        return ret;
    }

    private static int pollAll(List<DatagramNode> nodes, int n, boolean receives) throws VerbsException {
        for (DatagramNode node : nodes) {
            int rc = node.poll(n, receives);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }

    private int client(PrintWriter out, CmEventChannel channel, List<DatagramNode> nodes, int messages)
            throws Exception {
        out.println("udaddy: starting client");
        InetSocketAddress dst = new InetSocketAddress(InetAddress.getByName(server), PORT);
        InetSocketAddress src = bind == null ? null : new InetSocketAddress(InetAddress.getByName(bind), 0);
        out.println("udaddy: connecting");
        List<CompletableFuture<CmDatagram>> resolving = new ArrayList<>();
        for (DatagramNode node : nodes) {
            resolving.add(CmDatagram.connectAsync(channel, src, dst, node.setup(true), new byte[0], RESOLVE, WHOLE));
        }
        int ret = 0;
        for (int i = 0; i < nodes.size(); i++) {
            DatagramNode node = nodes.get(i);
            try {
                node.datagram = resolving.get(i).get();
                node.destination = node.datagram.peer().orElseThrow();
            } catch (ExecutionException e) {
                ret = report(out, e.getCause());
                break;
            }
        }
        if (ret == 0 && messages > 0) {
            out.println("initiating data transfers");
            for (DatagramNode node : nodes) {
                ret = ret != 0 ? ret : node.postSends(false);
            }
            out.println("receiving data transfers");
            ret = ret != 0 ? ret : pollAll(nodes, messages, true);
            if (ret == 0) {
                out.println("data transfers complete");
            }
        }
        return ret;
    }

    /** The C tool's line for an event that ended a resolution, and its status. */
    static int report(PrintWriter out, Throwable failure) {
        if (failure instanceof CmException e) {
            out.printf("udaddy: event: RDMA_CM_EVENT_%s, error: %d%n", e.event(), e.status());
            return e.status();
        }
        if (failure instanceof DatagramNode.MessageTooLarge) {
            return -22;
        }
        if (failure instanceof VerbsException e) {
            out.printf("udaddy: %s: %s%n", e.verb(), e.errnoText());
            return -e.errno();
        }
        out.printf("udaddy: %s%n", failure);
        return -1;
    }
}
