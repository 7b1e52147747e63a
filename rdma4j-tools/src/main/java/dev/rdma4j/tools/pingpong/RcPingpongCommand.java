package dev.rdma4j.tools.pingpong;

import dev.rdma4j.QpType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rdma4j rc-pingpong}: {@code ibv_rc_pingpong} on rdma4j, interoperable with it. The options for
 * on-demand paging, completion timestamps, device memory and the new post-send API are accepted and
 * refused: rdma4j does not offer those yet.
 */
@Command(name = "rc-pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "Ping-pong over a reliable connection (RC), like ibv_rc_pingpong: without <host> "
                + "start a server and wait for connection, with <host> connect to the server at <host>.")
public final class RcPingpongCommand extends ConnectedPingpongCommand {
    @Option(names = {"-o", "--odp"}, description = "use on demand paging (not supported: refused)")
    boolean odp;

    @Option(names = {"-O", "--iodp"}, description = "use implicit on demand paging (not supported: refused)")
    boolean implicitOdp;

    @Option(names = {"-P", "--prefetch"}, description = "prefetch an ODP MR (not supported: refused)")
    boolean prefetch;

    @Option(names = {"-t", "--ts"}, description = "get CQE with timestamp (not supported: refused)")
    boolean timestamps;

    @Option(names = {"-j", "--dm"}, description = "use device memory (not supported: refused)")
    boolean deviceMemory;

    @Option(names = {"-N", "--new_send"}, description = "use new post send WR API (not supported: refused)")
    boolean newSend;

    @Override
    QpType type() {
        return QpType.RC;
    }

    @Override
    String refusedOption() {
        String why = odp ? "-o/--odp (on-demand paging)"
                : implicitOdp ? "-O/--iodp (implicit on-demand paging)"
                : prefetch ? "-P/--prefetch (prefetching an ODP region)"
                : timestamps ? "-t/--ts (completion timestamps)"
                : deviceMemory ? "-j/--dm (device memory)"
                : newSend ? "-N/--new_send (the ibv_wr_* post-send API)" : null;
        return why != null ? why + " is not supported by rdma4j" : super.refusedOption();
    }
}
