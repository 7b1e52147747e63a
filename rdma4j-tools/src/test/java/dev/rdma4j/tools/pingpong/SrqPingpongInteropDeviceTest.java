package dev.rdma4j.tools.pingpong;

import static dev.rdma4j.tools.ToolRuns.ADDRESS;
import static dev.rdma4j.tools.ToolRuns.awaitListening;
import static dev.rdma4j.tools.ToolRuns.field;
import static dev.rdma4j.tools.ToolRuns.finish;
import static dev.rdma4j.tools.ToolRuns.value;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.tools.ToolRuns;
import dev.rdma4j.Context;
import dev.rdma4j.Device;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import dev.rdma4j.tools.ToolRuns.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j srq-pingpong} against rdma-core's {@code ibv_srq_pingpong} on the same device, in both
 * roles, with several QP counts and with and without {@code -e}, and against itself. The Java side runs
 * in this JVM, the C side as a process; the client starts once the server's TCP port is in LISTEN state.
 */
@Tag("device")
class SrqPingpongInteropDeviceTest {
    private static String device;
    private static String gid;

    @TempDir
    Path dir;

    /** Which implementation plays a role. */
    private enum Impl {
        JAVA, C
    }

    @BeforeAll
    static void device() throws Exception {
        device = Device.byNameOrDefault(null).name();
        try (Context ctx = Context.open(device)) {
            gid = ctx.queryGid(1, 1).gid().toString();
        }
    }


    @Test
    void javaServerCClientEightQps() throws Exception {
        pair(18701, Impl.JAVA, List.of(), Impl.C, List.of(), 8, "-n", "120");
    }

    @Test
    void cServerJavaClientEightQps() throws Exception {
        pair(18702, Impl.C, List.of(), Impl.JAVA, List.of(), 8, "-n", "120");
    }

    @Test
    void javaServerCClientOneQpWithValidation() throws Exception {
        pair(18703, Impl.JAVA, List.of(), Impl.C, List.of(), 1, "-n", "100", "-s", "9000", "-c");
    }

    /** The default: 16 QPs. */
    @Test
    void cServerJavaClientDefaultQps() throws Exception {
        pair(18704, Impl.C, List.of(), Impl.JAVA, List.of(), 16, "-n", "160", "-s", "2000");
    }

    @Test
    void javaServerJavaClientSmallReceiveDepth() throws Exception {
        pair(18705, Impl.JAVA, List.of(), Impl.JAVA, List.of(), 4, "-n", "100", "-r", "8", "-s", "100");
    }

    @Test
    void eventsJavaServerCClient() throws Exception {
        pair(18706, Impl.JAVA, List.of("-e"), Impl.C, List.of("-e"), 8, "-n", "120");
    }

    @Test
    void eventsCServerJavaClient() throws Exception {
        pair(18707, Impl.C, List.of("-e"), Impl.JAVA, List.of("-e"), 4, "-n", "100", "-c");
    }

    @Test
    void eventsJavaServerPollingJavaClient() throws Exception {
        pair(18708, Impl.JAVA, List.of("-e"), Impl.JAVA, List.of(), 16, "-n", "100", "-s", "512");
    }

    // ------------------------------------------------------------------ the harness

    /**
     * Runs a server and a client with {@code -q numQp} and the same options (plus each side's own), and
     * checks both outputs and how they fit together.
     */
    private void pair(int port, Impl serverImpl, List<String> serverOnly, Impl clientImpl, List<String> clientOnly,
            int numQp, String... options) throws Exception {
        List<String> opts = new ArrayList<>(List.of("-q", Integer.toString(numQp)));
        opts.addAll(List.of(options));
        long size = opts.contains("-s") ? Long.parseLong(value(opts, "-s")) : 4096;
        long iters = Long.parseLong(value(opts, "-n"));
        List<String> serverOpts = new ArrayList<>(serverOnly);
        serverOpts.addAll(opts);
        List<String> clientOpts = new ArrayList<>(clientOnly);
        clientOpts.addAll(opts);
        CompletableFuture<Run> server = start(serverImpl, port, serverOpts, false);
        awaitListening(port, server);
        Run client = finish(start(clientImpl, port, clientOpts, true));
        Run s = finish(server);
        for (Run r : List.of(s, client)) {
            assertThat(r.status()).as("%s", r).isZero();
            assertThat(r.err()).as("%s", r).isEmpty();
            assertThat(r.out()).as("%s: no \"invalid data\" lines, also with -c", r).hasSize(2 * numQp + 2);
            for (int i = 0; i < 2 * numQp; i++) {
                assertThat(r.out().get(i)).as("%s", r).matches(ADDRESS)
                        .startsWith(i < numQp ? "  local address:  " : "  remote address: ");
                assertThat(field(r, i, 6)).as("%s", r).isEqualTo(gid);
            }
            assertThat(r.out().get(2 * numQp)).as("%s", r)
                    .matches(size * iters * 2 + " bytes in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d Mbit/sec");
            assertThat(r.out().get(2 * numQp + 1)).as("%s", r)
                    .matches(iters + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d usec/iter");
        }
        // each side's remote address i is the other's local address i
        for (int i = 0; i < numQp; i++) {
            for (int f = 2; f <= 4; f++) {
                assertThat(field(s, numQp + i, f)).as("server's remote vs client's local\n%s\n%s", s, client)
                        .isEqualTo(field(client, i, f));
                assertThat(field(client, numQp + i, f)).as("client's remote vs server's local\n%s\n%s", s, client)
                        .isEqualTo(field(s, i, f));
            }
        }
        if (serverImpl != clientImpl) { // the same line formats, numbers aside
            assertThat(s.out().stream().map(ToolRuns::shape).toList())
                    .isEqualTo(client.out().stream().map(ToolRuns::shape).toList());
        }
    }




    private CompletableFuture<Run> start(Impl impl, int port, List<String> options, boolean client)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("-d", device, "-g", "1", "-p", Integer.toString(port)));
        args.addAll(options);
        if (client) {
            args.add("127.0.0.1");
        }
        String who = (impl == Impl.JAVA ? "rdma4j srq-pingpong " : "ibv_srq_pingpong ") + String.join(" ", args);
        if (impl == Impl.JAVA) {
            List<String> full = new ArrayList<>(List.of("srq-pingpong"));
            full.addAll(args);
            return ToolRuns.java(who, full);
        }
        List<String> cmd = new ArrayList<>(List.of("ibv_srq_pingpong"));
        cmd.addAll(args);
        return ToolRuns.process(dir, who, cmd);
    }


}
