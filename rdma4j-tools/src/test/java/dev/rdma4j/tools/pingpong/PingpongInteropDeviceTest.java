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
 * {@code rdma4j rc-pingpong}, {@code uc-pingpong} and {@code ud-pingpong} against rdma-core's
 * {@code ibv_rc_pingpong}, {@code ibv_uc_pingpong} and {@code ibv_ud_pingpong} on the same device, in
 * both roles, and against themselves. The Java side runs in this JVM, the C side as a process; the
 * client starts once the server's TCP port is in LISTEN state.
 */
@Tag("device")
class PingpongInteropDeviceTest {
    private static String device;
    private static String gid;

    @TempDir
    Path dir;

    @BeforeAll
    static void device() throws Exception {
        device = Device.byNameOrDefault(null).name();
        try (Context ctx = Context.open(device)) {
            gid = ctx.queryGid(1, 1).gid().toString();
        }
    }


    // ------------------------------------------------------------------ RC

    @Test
    void rcJavaServerCClient() throws Exception {
        pair("rc", 18601, java(), c(), "-s", "5000", "-n", "200");
    }

    @Test
    void rcCServerJavaClientWithValidation() throws Exception {
        pair("rc", 18602, c(), java(), "-s", "9000", "-n", "150", "-c");
    }

    @Test
    void rcJavaServerJavaClientWithSmallReceiveDepth() throws Exception {
        pair("rc", 18603, java(), java(), "-s", "3000", "-n", "120", "-r", "8");
    }

    /** The C client without -c leaves its pages unmarked: the Java server's -c reports each page. */
    @Test
    void rcValidationReportsUnmarkedPages() throws Exception {
        int port = 18604;
        CompletableFuture<Run> server = start(java(), "rc", port, List.of("-s", "9000", "-n", "20", "-c"), false);
        awaitListening(port, server);
        Run client = finish(start(c(), "rc", port, List.of("-s", "9000", "-n", "20"), true));
        Run s = finish(server);
        assertSuccess(s, 20, 9000);
        assertSuccess(client, 20, 9000);
        assertThat(s.out().subList(4, s.out().size())).as("%s", s).containsExactly("invalid data in page 0",
                "invalid data in page 1", "invalid data in page 2");
    }

    // ------------------------------------------------------------------ UC

    @Test
    void ucJavaServerCClient() throws Exception {
        pair("uc", 18611, java(), c(), "-s", "2000", "-n", "150", "-m", "512");
    }

    @Test
    void ucCServerJavaClient() throws Exception {
        pair("uc", 18612, c(), java(), "-s", "2000", "-n", "150", "-c");
    }

    @Test
    void ucJavaServerJavaClient() throws Exception {
        pair("uc", 18613, java(), java(), "-s", "100", "-n", "100");
    }

    // ------------------------------------------------------------------ UD

    @Test
    void udJavaServerCClient() throws Exception {
        pair("ud", 18621, java(), c(), "-s", "512", "-n", "200", "-c");
    }

    @Test
    void udCServerJavaClient() throws Exception {
        pair("ud", 18622, c(), java(), "-s", "512", "-n", "200");
    }

    @Test
    void udJavaServerJavaClient() throws Exception {
        pair("ud", 18623, java(), java(), "-s", "1000", "-n", "100", "-r", "16");
    }

    @Test
    void udRefusesMoreThanTheActiveMtu() throws Exception {
        Run r = finish(start(java(), "ud", 18624, List.of("-s", "4000"), false));
        assertThat(r.status()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).matches("Requested size larger than port MTU \\(\\d+\\)\n");
    }

    // ------------------------------------------------------------------ -e: sleeping on CQ events

    @Test
    void rcEventsJavaServerCClient() throws Exception {
        pair("rc", 18631, java(), List.of("-e"), c(), List.of("-e"), "-s", "2000", "-n", "150");
    }

    @Test
    void rcEventsCServerJavaClient() throws Exception {
        pair("rc", 18632, c(), List.of("-e"), java(), List.of("-e"), "-s", "4096", "-n", "120", "-c", "-r", "16");
    }

    /** Events on one side only: the wire does not care how a side waits. */
    @Test
    void rcEventsJavaServerPollingCClient() throws Exception {
        pair("rc", 18633, java(), List.of("-e"), c(), List.of(), "-s", "1000", "-n", "110");
    }

    @Test
    void rcPollingCServerEventsJavaClient() throws Exception {
        pair("rc", 18634, c(), List.of(), java(), List.of("-e"), "-s", "1000", "-n", "110");
    }

    @Test
    void ucEventsJavaServerCClient() throws Exception {
        pair("uc", 18635, java(), List.of("-e"), c(), List.of("-e"), "-s", "2000", "-n", "100");
    }

    @Test
    void udEventsCServerJavaClient() throws Exception {
        pair("ud", 18636, c(), List.of("-e"), java(), List.of("-e"), "-s", "512", "-n", "100");
    }

    @Test
    void udEventsJavaServerCClient() throws Exception {
        pair("ud", 18637, java(), List.of("-e"), c(), List.of("-e"), "-s", "512", "-n", "100", "-c");
    }

    @Test
    void rcEventsJavaServerJavaClient() throws Exception {
        pair("rc", 18638, java(), List.of("-e"), java(), List.of("-e"), "-s", "3000", "-n", "100", "-r", "8");
    }

    // ------------------------------------------------------------------ the harness

    /** Which implementation plays a role. */
    private enum Impl {
        JAVA, C
    }

    private static Impl java() {
        return Impl.JAVA;
    }

    private static Impl c() {
        return Impl.C;
    }

    /**
     * Runs a server and a client with the same options and checks both outputs and how they fit together.
     */
    private void pair(String tool, int port, Impl serverImpl, Impl clientImpl, String... options) throws Exception {
        pair(tool, port, serverImpl, List.of(), clientImpl, List.of(), options);
    }

    /** {@link #pair(String, int, Impl, Impl, String...)} with options for one side only (such as -e). */
    private void pair(String tool, int port, Impl serverImpl, List<String> serverOnly, Impl clientImpl,
            List<String> clientOnly, String... options) throws Exception {
        List<String> opts = List.of(options);
        long size = Long.parseLong(value(opts, "-s"));
        long iters = Long.parseLong(value(opts, "-n"));
        List<String> serverOpts = new ArrayList<>(serverOnly);
        serverOpts.addAll(opts);
        List<String> clientOpts = new ArrayList<>(clientOnly);
        clientOpts.addAll(opts);
        CompletableFuture<Run> server = start(serverImpl, tool, port, serverOpts, false);
        awaitListening(port, server);
        Run client = finish(start(clientImpl, tool, port, clientOpts, true));
        Run s = finish(server);
        assertSuccess(s, iters, size);
        assertSuccess(client, iters, size);
        boolean ud = tool.equals("ud");
        for (Run r : List.of(s, client)) {
            assertThat(r.out()).as("%s", r).hasSize(4); // no "invalid data" lines, also with -c
            assertThat(field(r, 0, 5)).as("%s: ud_pingpong prints \"PSN ...: GID\"", r).isEqualTo(ud ? ":" : ",");
            assertThat(field(r, 1, 5)).isEqualTo(",");
            assertThat(field(r, 0, 6)).as("%s", r).isEqualTo(gid);
            assertThat(field(r, 1, 6)).as("%s", r).isEqualTo(gid);
        }
        // each side's remote address is the other's local one
        for (int f = 2; f <= 4; f++) {
            assertThat(field(s, 1, f)).as("server's remote vs client's local\n%s\n%s", s, client)
                    .isEqualTo(field(client, 0, f));
            assertThat(field(client, 1, f)).as("client's remote vs server's local\n%s\n%s", s, client)
                    .isEqualTo(field(s, 0, f));
        }
        if (serverImpl != clientImpl) { // the same line formats, numbers aside
            assertThat(s.out().stream().map(ToolRuns::shape).toList())
                    .isEqualTo(client.out().stream().map(ToolRuns::shape).toList());
        }
    }

    private static void assertSuccess(Run r, long iters, long size) {
        assertThat(r.status()).as("%s", r).isZero();
        assertThat(r.err()).as("%s", r).isEmpty();
        assertThat(r.out()).as("%s", r).hasSizeGreaterThanOrEqualTo(4);
        assertThat(r.out().get(0)).as("%s", r).matches(ADDRESS).startsWith("  local address:  ");
        assertThat(r.out().get(1)).as("%s", r).matches(ADDRESS).startsWith("  remote address: ");
        assertThat(r.out().get(2)).as("%s", r)
                .matches(size * iters * 2 + " bytes in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d Mbit/sec");
        assertThat(r.out().get(3)).as("%s", r)
                .matches(iters + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d usec/iter");
    }




    private CompletableFuture<Run> start(Impl impl, String tool, int port, List<String> options, boolean client)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("-d", device, "-g", "1", "-p", Integer.toString(port)));
        args.addAll(options);
        if (client) {
            args.add("127.0.0.1");
        }
        String who = (impl == Impl.JAVA ? "rdma4j " + tool + "-pingpong " : "ibv_" + tool + "_pingpong ")
                + String.join(" ", args);
        if (impl == Impl.JAVA) {
            List<String> full = new ArrayList<>(List.of(tool + "-pingpong"));
            full.addAll(args);
            return ToolRuns.java(who, full);
        }
        List<String> cmd = new ArrayList<>(List.of("ibv_" + tool + "_pingpong"));
        cmd.addAll(args);
        return ToolRuns.process(dir, who, cmd);
    }


}
