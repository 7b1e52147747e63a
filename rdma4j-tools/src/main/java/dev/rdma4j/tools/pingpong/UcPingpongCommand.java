package dev.rdma4j.tools.pingpong;

import dev.rdma4j.QpType;
import picocli.CommandLine.Command;

/** {@code rdma4j uc-pingpong}: {@code ibv_uc_pingpong} on rdma4j, interoperable with it. */
@Command(name = "uc-pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "Ping-pong over an unreliable connection (UC), like ibv_uc_pingpong: without <host> "
                + "start a server and wait for connection, with <host> connect to the server at <host>.")
public final class UcPingpongCommand extends ConnectedPingpongCommand {
    @Override
    QpType type() {
        return QpType.UC;
    }
}
