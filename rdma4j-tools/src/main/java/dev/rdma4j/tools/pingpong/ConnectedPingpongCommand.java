package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.CNumberConverter;
import dev.rdma4j.Mtu;
import picocli.CommandLine.Option;

/** The options {@code ibv_rc_pingpong} and {@code ibv_uc_pingpong} have and {@code ibv_ud_pingpong} lacks. */
public abstract class ConnectedPingpongCommand extends PingpongCommand {
    @Option(names = {"-s", "--size"}, paramLabel = "<size>", converter = CNumberConverter.class,
            defaultValue = "4096", description = "size of message to exchange (default 4096)")
    long size;

    @Option(names = {"-m", "--mtu"}, paramLabel = "<size>", converter = CNumberConverter.class,
            defaultValue = "1024", description = "path MTU (default 1024)")
    long mtu;

    @Override
    final long size() {
        return size;
    }

    @Override
    final Mtu pathMtu() {
        return Mtu.ofBytes((int) mtu);
    }
}
