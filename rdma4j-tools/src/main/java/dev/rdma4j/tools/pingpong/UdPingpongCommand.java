package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.CNumberConverter;
import dev.rdma4j.Mtu;
import dev.rdma4j.QpType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rdma4j ud-pingpong}: {@code ibv_ud_pingpong} on rdma4j, interoperable with it. As in rdma-core
 * 44 the default size is 1024 (its usage text says 2048) and must fit the port's active MTU.
 */
@Command(name = "ud-pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = "Ping-pong over unreliable datagrams (UD), like ibv_ud_pingpong: without <host> "
                + "start a server and wait for connection, with <host> connect to the server at <host>.")
public final class UdPingpongCommand extends PingpongCommand {
    @Option(names = {"-s", "--size"}, paramLabel = "<size>", converter = CNumberConverter.class,
            defaultValue = "1024", description = "size of message to exchange (default 1024, at most the port's "
                    + "active MTU)")
    long size;

    @Override
    QpType type() {
        return QpType.UD;
    }

    @Override
    long size() {
        return size;
    }

    @Override
    Mtu pathMtu() {
        return null;
    }
}
