package dev.rdma4j.tools.cmatose;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.rdma4j.tools.ToolRuns;
import dev.rdma4j.tools.ToolRuns.Run;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j ucmatose} against librdmacm's {@code ucmatose} on the same device: for each set of options the C
 * server with the C client first, whose output is the reference, then the Java server with the C client, the C
 * server with the Java client and Java with Java; each run's exit status, stdout lines and stderr must be the C
 * run's of the same role. The Java side runs in this JVM, the C side as a process. The client starts once the
 * server's rdma_cm id listens (as {@code rdma resource show cm_id} reports it), and is retried while rdma_cm
 * rejects it for want of a listener, within a deadline.
 */
@Tag("device")
class CmatoseInteropDeviceTest {
    private static final Duration DEADLINE = ToolRuns.DEADLINE;
    /** A client's line when nothing listens on the port (IB CM reject reason 8, INVALID_SERVICE_ID). */
    private static final String REJECTED = "cmatose: event: RDMA_CM_EVENT_REJECTED, error: 8";
    private static String addr;

    @TempDir
    Path dir;

    /** A server's and a client's runs. */
    record Pair(Run server, Run client) {
    }

    /** Which implementation plays a role. */
    private enum Impl {
        JAVA, C
    }

    /** The device's IPv4 address (its RoCE v2 GID), or RDMA4J_CMATOSE_ADDR; no device address is a failure. */
    @BeforeAll
    static void address() throws Exception {
        addr = System.getenv("RDMA4J_CMATOSE_ADDR");
        if (addr == null) {
            try (dev.rdma4j.Context ctx = dev.rdma4j.Context.open(null)) {
                addr = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError(
                        "the device has no IPv4 GID: set RDMA4J_CMATOSE_ADDR to an address on it")).getHostAddress();
            }
        }
    }

    /** The defaults: one connection, 10 messages of 100 bytes each way; the server on any address. */
    @Test
    void oneConnectionWithTheDefaults() throws Exception {
        List<String> data = List.of("initiating data transfers", "completing sends", "receiving data transfers",
                "data transfers complete");
        everyPairing(7481, List.of(), List.of(), List.of(), data);
    }

    /** Two connections, 20 messages of 1000 bytes; the server bound to the address, the client bound to it too. */
    @Test
    void twoConnectionsBoundToTheAddress() throws Exception {
        List<String> data = List.of("initiating data transfers", "completing sends", "receiving data transfers",
                "data transfers complete");
        everyPairing(7485, List.of("-b", addr), List.of("-b", addr), List.of("-c", "2", "-C", "20", "-S", "1000"),
                data);
    }

    /** Two connections and no messages ({@code -C 0}): connect and disconnect only. */
    @Test
    void twoConnectionsWithoutMessages() throws Exception {
        everyPairing(7489, List.of(), List.of(), List.of("-c", "2", "-C", "0"), List.of());
    }

    /** Nothing listens: both clients are rejected (IB CM reason 8) and say so alike, with status 8. */
    @Test
    void clientWithoutServerFailsLikeTheCTool() throws Exception {
        List<String> args = List.of("-s", addr, "-p", "7493", "-c", "2");
        Run c = ToolRuns.finish(start(Impl.C, args));
        Run java = ToolRuns.finish(start(Impl.JAVA, args));
        assertThat(c.status()).as("%s", c).isEqualTo(8);
        assertThat(c.out()).as("%s", c).isEqualTo(List.of("cmatose: starting client", "cmatose: connecting",
                REJECTED, "test complete", "return status 8"));
        assertThat(java.status()).as("%s", java).isEqualTo(c.status());
        assertThat(java.out()).as("%s", java).isEqualTo(c.out());
        assertThat(java.err()).as("%s", java).isEqualTo(c.err());
    }

    // ------------------------------------------------------------------ the harness

    /**
     * C with C (the reference, checked against the lines the C tool prints), then Java server and C client, C
     * server and Java client, Java with Java, each on its own port from {@code port} on; every run must match the
     * reference's run of its role line by line.
     */
    private void everyPairing(int port, List<String> serverArgs, List<String> clientArgs, List<String> common,
            List<String> serverDataLines) throws Exception {
        Pair reference = pair(Impl.C, Impl.C, port, serverArgs, clientArgs, common);
        List<String> serverLines = new ArrayList<>(List.of("cmatose: starting server"));
        serverLines.addAll(serverDataLines);
        serverLines.addAll(List.of("cmatose: disconnecting", "disconnected", "test complete", "return status 0"));
        assertThat(reference.server().status()).as("%s", reference.server()).isZero();
        assertThat(reference.server().out()).as("%s", reference.server()).isEqualTo(serverLines);
        assertThat(reference.client().status()).as("%s", reference.client()).isZero();
        assertThat(reference.client().out()).as("%s", reference.client()).startsWith("cmatose: starting client",
                "cmatose: connecting").endsWith("test complete", "return status 0");
        int next = port + 1;
        for (Impl[] roles : new Impl[][] {{Impl.JAVA, Impl.C}, {Impl.C, Impl.JAVA}, {Impl.JAVA, Impl.JAVA}}) {
            Pair p = pair(roles[0], roles[1], next++, serverArgs, clientArgs, common);
            same(p.server(), reference.server());
            same(p.client(), reference.client());
        }
    }

    private static void same(Run run, Run reference) {
        assertThat(run.status()).as("status of %s\nC's: %s", run, reference).isEqualTo(reference.status());
        assertThat(run.out()).as("stdout of %s\nC's: %s", run, reference).isEqualTo(reference.out());
        assertThat(run.err()).as("stderr of %s\nC's: %s", run, reference).isEqualTo(reference.err());
    }

    /** Runs a server, waits until it listens, then runs a client against it. */
    private Pair pair(Impl serverImpl, Impl clientImpl, int port, List<String> serverArgs, List<String> clientArgs,
            List<String> common) throws Exception {
        List<String> s = new ArrayList<>(serverArgs);
        s.addAll(List.of("-p", Integer.toString(port)));
        s.addAll(common);
        List<String> c = new ArrayList<>(List.of("-s", addr));
        c.addAll(clientArgs);
        c.addAll(List.of("-p", Integer.toString(port)));
        c.addAll(common);
        CompletableFuture<Run> server = start(serverImpl, s);
        ToolRuns.awaitCmListening(port, server);
        Run client = client(clientImpl, server, c);
        return new Pair(ToolRuns.finish(server), client);
    }

    /** Runs the client until it gets past rdma_cm's reject of a port nobody listens on yet. */
    private Run client(Impl impl, CompletableFuture<Run> server, List<String> args) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        for (;;) {
            Run r = ToolRuns.finish(start(impl, args));
            if (r.status() != 8 || !r.out().contains(REJECTED)) {
                return r;
            }
            if (System.nanoTime() > deadline) {
                fail("the client is still rejected after " + DEADLINE + ": " + r);
            }
            ToolRuns.serverEndsWithin(server, 50);
        }
    }

    private CompletableFuture<Run> start(Impl impl, List<String> args) throws IOException {
        return ToolRuns.tool(dir, impl == Impl.JAVA, "ucmatose", args, new StringWriter());
    }
}
