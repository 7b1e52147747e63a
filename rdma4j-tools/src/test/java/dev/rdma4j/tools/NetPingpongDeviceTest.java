package dev.rdma4j.tools;

import static dev.rdma4j.tools.ToolRuns.awaitListening;
import static dev.rdma4j.tools.ToolRuns.finish;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.tools.ToolRuns.Run;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code rdma4j net-pingpong}: both sides in this JVM, in each way of waiting; the client reports rc_pingpong's
 * lines for the measured round trips, the server how many it served (warm-up and measured).
 */
@Tag("device")
class NetPingpongDeviceTest {
    @ParameterizedTest
    @ValueSource(strings = {"", "--busy-poll", "--async", "--async --busy-poll"})
    void everyWayOfWaitingMeasuresItsRoundTripsOverTcp(String mode) throws Exception {
        int port = 18790 + mode.length();
        List<String> opts = new ArrayList<>(List.of("net-pingpong", "--tcp", "-s", "64", "-n", "300",
                "--warmup", "100", "-p", Integer.toString(port)));
        if (!mode.isEmpty()) {
            opts.addAll(List.of(mode.split(" ")));
        }
        CompletableFuture<Run> server = ToolRuns.java("server", opts);
        awaitListening(port, server);
        List<String> client = new ArrayList<>(opts);
        client.add("127.0.0.1");
        assertRun(finish(ToolRuns.java("client", client)), finish(server));
    }

    @Test
    void overRdmaCmTheClientWaitsForTheServer() throws Exception {
        String addr;
        try (dev.rdma4j.Context ctx = dev.rdma4j.Context.open(null)) {
            addr = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID"))
                    .getHostAddress();
        }
        List<String> opts = List.of("net-pingpong", "-s", "64", "-n", "300", "--warmup", "100", "-p", "18799");
        // both at once: the client tries again while no server listens yet (rdma_cm has no port to watch)
        List<String> client = new ArrayList<>(opts);
        client.addAll(List.of("--connect-timeout", "120", addr));
        CompletableFuture<Run> c = ToolRuns.java("client", client);
        CompletableFuture<Run> server = ToolRuns.java("server", opts);
        assertRun(finish(c), finish(server));
    }

    /**
     * {@code --warmup-time}: rounds of 500 round trips after the warm-up until neither JIT compiled for two rounds,
     * the server's JIT asked by a probe after each (answered by the server in both ways of serving); the line says
     * how many, and the server served them and the probes too.
     */
    @ParameterizedTest
    @ValueSource(strings = {"", "--async"})
    void aWarmUpUntilBothJitsAreQuiet(String mode) throws Exception {
        int port = 18780 + mode.length();
        List<String> opts = new ArrayList<>(List.of("net-pingpong", "--tcp", "-s", "64", "-n", "300",
                "--warmup", "100", "--warmup-time", "600", "-p", Integer.toString(port)));
        if (!mode.isEmpty()) {
            opts.add(mode);
        }
        CompletableFuture<Run> server = ToolRuns.java("server", opts);
        awaitListening(port, server);
        List<String> client = new ArrayList<>(opts);
        client.add("127.0.0.1");
        Run c = finish(ToolRuns.java("client", client));
        Run s = finish(server);
        assertThat(c.status()).as("%s", c).isZero();
        assertThat(s.status()).as("%s", s).isZero();
        assertThat(c.out()).as("%s", c).hasSize(5);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("# warm-up: (\\d+) round trips of 64 bytes in "
                + "(\\d+) rounds after 100, [0-9.]+ s, until neither side's JIT compiled for two rounds; not counted")
                .matcher(c.out().get(1));
        assertThat(m.matches()).as("%s", c).isTrue();
        int rounds = Integer.parseInt(m.group(2));
        assertThat(rounds).isGreaterThanOrEqualTo(2);
        assertThat(Integer.parseInt(m.group(1))).isEqualTo(500 * rounds);
        // warm-up, rounds, measured, and a probe before the rounds and after each
        assertThat(s.out().get(0)).as("%s", s)
                .startsWith("served " + (100 + 500 * rounds + 300 + rounds + 1) + " round trips to ");
    }

    private static void assertRun(Run client, Run server) {
        assertThat(client.status()).as("%s", client).isZero();
        assertThat(server.status()).as("%s", server).isZero();
        assertThat(client.out()).as("%s", client).hasSize(4);
        assertThat(client.out().get(0)).matches("connected to \\S+: 100 round trips of warm-up, then 300 measured");
        assertThat(client.out().get(1)).matches("38400 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec");
        assertThat(client.out().get(2)).matches("300 iters in [0-9.]+ seconds = [0-9.]+ usec/iter");
        assertThat(client.out().get(3)).matches("median round trip [0-9.]+ usec");
        assertThat(server.out()).as("%s", server).hasSize(1);
        assertThat(server.out().get(0)).startsWith("served 400 round trips to ");
    }
}
