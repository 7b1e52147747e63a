package dev.rdma4j.tools.datagram;

import dev.rdma4j.AddressHandle;
import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmDatagram;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmEventType;
import dev.rdma4j.connect.CmException;
import dev.rdma4j.connect.CmPortSpace;
import dev.rdma4j.connect.MulticastGroup;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.engine.PollingMode;
import dev.rdma4j.tools.CNumberConverter;
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
 * {@code rdma4j mckey}: rdmacm-utils' {@code mckey} (rdma-core 44) on rdma4j: {@code -c} UD queue pairs, each on an
 * rdma_cm id resolved to the multicast address ({@code rdma_resolve_addr}) and joined to its group
 * ({@code rdma_join_multicast_ex}); a sender ({@code -s}) sends {@code -C} datagrams of {@code -S} bytes to the group,
 * a receiver waits for as many; both leave ({@code rdma_leave_multicast}). The same lines and exit status as the C
 * tool, interoperable with it in both roles and across hosts.
 *
 * <p>Options as in C: {@code -m} multicast address, {@code -s} sender, {@code -b} bind address, {@code -c}
 * connections, {@code -C} message count, {@code -S} message size, {@code -o} send-only full member, numbers read
 * with {@code atoi}. {@code -M} (an unmapped AF_IB address), {@code -l} (a queue pair created with
 * {@code IBV_QP_CREATE_BLOCK_SELF_MCAST_LB}, which rdma4j's builder does not offer) and a {@code -p} port space
 * other than UDP's are refused with a message and status 1. As in C, the tool waits 3 s after joining before the
 * transfers. One difference on purpose: the sender's datagrams are unsignaled as in C, but the last is signaled and
 * awaited before the tool leaves, so none is lost as it tears down (the C sender destroys its queue pair at once,
 * and on Soft-RoCE under emulation often before any datagram left).
 */
@Command(name = "mckey", sortOptions = false, separator = " ", exitCodeOnInvalidInput = 1, exitCodeOnUsageHelp = 0,
        description = {"Multicast over rdma_cm, like rdmacm-utils' mckey (interoperable).",
                "  mckey -m multicast_address [-s] [-b bind_address] [-c connections] [-C message_count]",
                "        [-S message_size] [-o]"})
public final class MckeyCommand implements Callable<Integer> {
    private static final Duration RESOLVE = Duration.ofMillis(2000);
    private static final Duration WHOLE = Duration.ofMinutes(5);

    @Spec
    CommandSpec spec;

    @Option(names = "-m", paramLabel = "multicast_address", description = "multicast address")
    String group;

    @Option(names = "-M", paramLabel = "unmapped_multicast_address", description = "refused: AF_IB addresses")
    String unmapped;

    @Option(names = "-s", description = "sender")
    boolean sender;

    @Option(names = "-b", paramLabel = "bind_address", description = "bind address")
    String bind;

    @Option(names = "-c", paramLabel = "connections", description = "connections (default 1)")
    String connections = "1";

    @Option(names = "-C", paramLabel = "message_count", description = "message count (default 10)")
    String count = "10";

    @Option(names = "-S", paramLabel = "message_size", description = "message size (default 100)")
    String size = "100";

    @Option(names = "-p", paramLabel = "port_space", description = "0x111 for UDP (the default; others refused)")
    String portSpace;

    @Option(names = "-o", description = "join as a send-only full-member")
    boolean sendOnly;

    @Option(names = "-l", description = "join without multicast loopback (refused)")
    boolean noLoopback;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    /** For picocli. */
    public MckeyCommand() {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try {
            String refused = unmapped != null ? "-M (unmapped AF_IB multicast addresses) is not supported"
                    : noLoopback ? "-l (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) is not supported"
                    : portSpace != null && new CNumberConverter().convert(portSpace) != CmPortSpace.UDP.code()
                            ? "-p " + portSpace
                                    + ": only the UDP port space (0x111) is supported"
                    : group == null ? "-m multicast_address is required" : null;
            if (refused != null) {
                spec.commandLine().getErr().println("rdma4j mckey: " + refused);
                return 1;
            }
            return run(out, Math.max(0, CNumberConverter.atoi(connections)), CNumberConverter.atoi(count),
                    CNumberConverter.atoi(size)) & 0xff;
        } finally {
            out.flush();
        }
    }

    private int run(PrintWriter out, int connections, int count, int size) throws Exception {
        int messages = size == 0 ? 0 : count;
        out.printf("mckey: starting %s%n", sender ? "client" : "server");
        List<DatagramNode> nodes = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            nodes.add(new DatagramNode("mckey", out, size, messages));
        }
        int ret;
        try (CompletionEngine engine = CompletionEngine.builder().mode(PollingMode.EVENT).build();
                CmEventChannel channel = CmEventChannel.create(engine)) {
            try {
                ret = joinAndTransfer(out, channel, nodes, messages);
                out.println("test complete");
            } finally {
                nodes.forEach(DatagramNode::close);
            }
        } catch (UnknownHostException e) {
            out.println("getaddrinfo failed (Name or service not known) - invalid hostname or IP address");
            out.println("test complete");
            ret = -2;
        }
        out.printf("return status %d%n", ret);
        return ret;
    }

    private int joinAndTransfer(PrintWriter out, CmEventChannel channel, List<DatagramNode> nodes, int messages)
            throws Exception {
        InetSocketAddress src = bind == null ? null : new InetSocketAddress(InetAddress.getByName(bind), 0);
        InetAddress address = InetAddress.getByName(group);
        out.println("mckey: joining");
        List<CompletableFuture<CmDatagram>> opening = new ArrayList<>();
        for (DatagramNode node : nodes) {
            opening.add(CmDatagram.openAsync(channel, src, address, node.setup(!sender), RESOLVE, WHOLE));
        }
        int ret = 0;
        List<MulticastGroup> joined = new ArrayList<>();
        for (int i = 0; i < nodes.size() && ret == 0; i++) {
            DatagramNode node = nodes.get(i);
            try {
                node.datagram = opening.get(i).get();
                node.datagram.addEventListener(e -> {
                    if (e.type() == CmEventType.MULTICAST_ERROR || e.type() == CmEventType.ADDR_CHANGE) {
                        out.printf("mckey: event: RDMA_CM_EVENT_%s, status: %d%n", e.type(), e.status());
                        out.flush();
                    }
                });
                MulticastGroup g = node.datagram.joinMulticastAsync(address, sendOnly).get();
                joined.add(g);
                AddressHandle.Attributes a = g.destination().addressHandle().attributes();
                out.printf("mckey: joined dgid: %s mlid 0x%x sl %d%n", ntop(a.dgid().toBytes()), a.dlid(),
                        a.serviceLevel());
                out.flush(); // a sender may wait for this line: the queue pair is attached to the group now
                node.destination = g.destination();
            } catch (ExecutionException e) {
                ret = report(out, e.getCause());
            }
        }
        if (ret == 0) {
            Thread.sleep(3000); // as the C tool: "give SM chance to configure switches"
            if (messages > 0) {
                if (sender) {
                    out.println("initiating data transfers");
                    for (DatagramNode node : nodes) {
                        ret = ret != 0 ? ret : node.postSends(false);
                    }
                } else {
                    out.println("receiving data transfers");
                    for (DatagramNode node : nodes) {
                        int rc = node.poll(messages, true);
                        if (rc != 0) {
                            ret = rc;
                            break;
                        }
                    }
                }
                if (ret == 0) {
                    out.println("data transfers complete");
                }
            }
        }
        for (MulticastGroup g : joined) { // as in C, the status is the last leave's
            try {
                g.close();
                ret = 0;
            } catch (VerbsException e) {
                out.printf("mckey: failure leaving: %s%n", e.errnoText());
                ret = -1;
            }
        }
        return ret;
    }

    /** The C tool's line for an event (or a call) that ended a join, and its status. */
    private static int report(PrintWriter out, Throwable failure) {
        if (failure instanceof CmException e) {
            out.printf("mckey: event: RDMA_CM_EVENT_%s, error: %d%n", e.event(), e.status());
            return e.status();
        }
        if (failure instanceof DatagramNode.MessageTooLarge) {
            return -22;
        }
        if (failure instanceof VerbsException e) {
            out.printf("mckey: %s: %s%n", e.verb().equals("rdma_resolve_addr") ? "resolve addr failure"
                    : e.verb(), e.errnoText());
            return -1;
        }
        out.printf("mckey: %s%n", failure);
        return -1;
    }

    /** {@code inet_ntop(AF_INET6, ...)}: the longest run of two or more zero groups as {@code ::}, IPv4-mapped dotted. */
    static String ntop(byte[] a) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = (a[2 * i] & 0xff) << 8 | a[2 * i + 1] & 0xff;
        }
        boolean mapped = g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0xffff;
        int groups = mapped ? 6 : 8;
        int best = -1;
        int bestLen = 1;
        for (int i = 0; i < groups; i++) {
            int j = i;
            while (j < groups && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                best = i;
                bestLen = j - i;
            }
            i = Math.max(i, j);
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < groups; i++) {
            if (i == best) {
                s.append(i == 0 ? "::" : ":");
                i += bestLen - 1;
                continue;
            }
            s.append(Integer.toHexString(g[i]));
            if (i < groups - 1 || mapped) {
                s.append(':');
            }
        }
        if (mapped) {
            s.append(a[12] & 0xff).append('.').append(a[13] & 0xff).append('.').append(a[14] & 0xff).append('.')
                    .append(a[15] & 0xff);
        }
        return s.toString();
    }
}
