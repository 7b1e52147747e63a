package dev.rdma4j.tools.datagram;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.rdma4j.tools.ToolRuns;
import dev.rdma4j.tools.ToolRuns.Run;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j udaddy} and {@code rdma4j mckey} against rdmacm-utils' {@code udaddy} and {@code mckey} on the same
 * device, in both roles and against themselves; each pair's lines and statuses are those of the C tools' own pair,
 * run first as the reference. The Java side runs in this JVM, the C side as a process.
 *
 * <p>udaddy's server listens on the fixed port 7174 of the UDP port space; its client starts once the kernel shows the
 * listening id ({@code rdma resource show cm_id}): run before, it is answered at once with a SIDR reply of status 1
 * (unsupported: nothing listens), and a client of several connections run as the server began to listen had some
 * answered and some not. mckey's sender starts once the receiver joined the group (rdma4j's: its line saying so, printed once
 * its queue pair is attached; C's: its host's IGMP membership in {@code /proc/net/igmp}, which the kernel's rdma_cm
 * adds as the join completes, the attach following at once in the same process), and sends 3 s after its own
 * join, as the C tool does. The C sender posts its datagrams unsignaled and destroys its address handle and queue pair
 * at once, so under emulation most of them (at times all) never leave: it is given {@code -C 1000} and run again
 * until the receiver has its 10. The C tools' lines are those of the C receiver fed by rdma4j and of the C sender
 * feeding rdma4j.
 */
@Tag("device")
class DatagramInteropDeviceTest {
    private static final Duration DEADLINE = ToolRuns.DEADLINE;
    private static String addr;
    private static int groups;

    @TempDir
    Path dir;

    private enum Impl {
        JAVA, C
    }

    @BeforeAll
    static void address() throws Exception {
        try (dev.rdma4j.Context ctx = dev.rdma4j.Context.open(null)) {
            addr = ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("the device has no IPv4 GID"))
                    .getHostAddress();
        }
    }

    // ------------------------------------------------------------------ udaddy

    @Test
    void udaddyInBothRolesPrintsWhatTheCToolsPrint() throws Exception {
        List<Run> reference = udaddy(Impl.C, Impl.C);
        assertThat(reference.get(0).out()).containsExactly("udaddy: starting server", "receiving data transfers",
                "sending replies", "data transfers complete", "test complete", "return status 0");
        assertThat(reference.get(1).out()).containsExactly("udaddy: starting client", "udaddy: connecting",
                "initiating data transfers", "receiving data transfers", "data transfers complete", "test complete",
                "return status 0");
        for (Impl[] roles : new Impl[][] {{Impl.JAVA, Impl.C}, {Impl.C, Impl.JAVA}, {Impl.JAVA, Impl.JAVA}}) {
            List<Run> runs = udaddy(roles[0], roles[1]);
            assertThat(runs.get(0).out()).as("%s", runs.get(0)).isEqualTo(reference.get(0).out());
            assertThat(runs.get(1).out()).as("%s", runs.get(1)).isEqualTo(reference.get(1).out());
        }
    }

    @Test
    void udaddyWithTwoConnectionsAndLargerMessages() throws Exception {
        for (Impl[] roles : new Impl[][] {{Impl.JAVA, Impl.C}, {Impl.C, Impl.JAVA}}) {
            List<Run> runs = udaddy(roles[0], roles[1], "-c", "2", "-C", "20", "-S", "1000");
            assertThat(runs.get(0).out()).as("%s", runs.get(0)).endsWith("data transfers complete", "test complete",
                    "return status 0");
            assertThat(runs.get(1).out()).as("%s", runs.get(1)).endsWith("data transfers complete", "test complete",
                    "return status 0");
        }
    }

    /** Server, then client once the server listens; both must exit 0. */
    private List<Run> udaddy(Impl serverImpl, Impl clientImpl, String... options) throws Exception {
        List<String> serverArgs = new ArrayList<>(List.of("-b", addr));
        serverArgs.addAll(List.of(options));
        List<String> clientArgs = new ArrayList<>(List.of("-s", addr));
        clientArgs.addAll(List.of(options));
        CompletableFuture<Run> server = start(serverImpl, "udaddy", serverArgs);
        // the client starts once the server listens: a client of -c 2 run while it began to listen had one request
        // refused and one accepted, and the server, its connections counted, left the next client's unanswered
        ToolRuns.awaitCmListening(UdaddyCommand.PORT, server);
        Run client = ToolRuns.finish(start(clientImpl, "udaddy", clientArgs));
        Run s = ToolRuns.finish(server);
        assertThat(s.status()).as("%s", s).isZero();
        assertThat(client.status()).as("%s", client).isZero();
        return List.of(s, client);
    }

    // ------------------------------------------------------------------ mckey

    @Test
    void mckeyInBothRolesPrintsWhatTheCToolsPrint() throws Exception {
        List<Run> javaFromC = mckey(Impl.JAVA, Impl.C);
        List<Run> cFromJava = mckey(Impl.C, Impl.JAVA);
        List<Run> javaFromJava = mckey(Impl.JAVA, Impl.JAVA);
        Run cReceiver = cFromJava.get(0);
        Run cSender = javaFromC.get(1);
        assertThat(cReceiver.out()).containsExactly("mckey: starting server", "mckey: joining",
                "mckey: joined dgid: ::ffff:" + group(cReceiver) + " mlid 0x0 sl 0", "receiving data transfers",
                "data transfers complete", "test complete", "return status 0");
        assertThat(cSender.out()).containsExactly("mckey: starting client", "mckey: joining",
                "mckey: joined dgid: ::ffff:" + group(cSender) + " mlid 0x0 sl 0", "initiating data transfers",
                "data transfers complete", "test complete", "return status 0");
        for (List<Run> runs : List.of(javaFromC, cFromJava, javaFromJava)) {
            assertThat(runs.get(0).out()).as("%s", runs.get(0)).isEqualTo(withGroup(cReceiver, runs.get(0)));
            assertThat(runs.get(1).out()).as("%s", runs.get(1)).isEqualTo(withGroup(cSender, runs.get(1)));
        }
    }

    @Test
    void mckeySendOnlySenderAndTwoReceivingConnections() throws Exception {
        List<Run> runs = mckey(Impl.JAVA, Impl.C, "-c", "2");
        assertThat(runs.get(0).out()).as("%s", runs.get(0)).endsWith("data transfers complete", "test complete",
                "return status 0");
        runs = mckey(Impl.C, Impl.JAVA, "-o");
        assertThat(runs.get(1).out()).as("%s", runs.get(1)).endsWith("data transfers complete", "test complete",
                "return status 0");
    }

    private static String group(Run run) {
        return run.who().split(" -m ")[1].split(" ")[0];
    }

    /** The reference's lines with the run's group address in the join line. */
    private static List<String> withGroup(Run reference, Run run) {
        return reference.out().stream().map(l -> l.replace(group(reference), group(run))).toList();
    }

    /**
     * A receiver, then a sender once the receiver's host joined the group; {@code -c} applies to the receiver,
     * {@code -o} to the sender. The C sender loses datagrams by design (it posts them unsignaled and tears down at
     * once): it sends 1000 and is run again, at most 20 times, until the receiver has its 10.
     */
    private List<Run> mckey(Impl receiverImpl, Impl senderImpl, String... options) throws Exception {
        String group = "239.1.3." + (++groups);
        List<String> receiverArgs = new ArrayList<>(List.of("-m", group, "-b", addr));
        List<String> senderArgs = new ArrayList<>(List.of("-m", group, "-b", addr, "-s"));
        for (int i = 0; i < options.length; i++) {
            if (options[i].equals("-o")) {
                senderArgs.add("-o");
            } else if (options[i].equals("-c")) {
                receiverArgs.addAll(List.of("-c", options[++i]));
            }
        }
        if (senderImpl == Impl.C) {
            senderArgs.addAll(List.of("-C", "1000"));
        }
        StringWriter live = new StringWriter();
        CompletableFuture<Run> receiver = start(receiverImpl, "mckey", receiverArgs, live);
        String igmp = String.format("%08X", Integer.reverseBytes(ipv4(group)));
        // rdma4j's receiver says when its queue pair is attached; C's attaches as the kernel joins the IP group
        await(() -> (receiverImpl == Impl.JAVA ? live.toString().contains("mckey: joined")
                : read(Path.of("/proc/net/igmp")).contains(igmp)) || receiver.isDone(),
                "the receiver's join of " + group);
        Run sender = ToolRuns.finish(start(senderImpl, "mckey", senderArgs));
        for (int attempt = 2; senderImpl == Impl.C && attempt <= 20 && sender.status() == 0; attempt++) {
            try {
                receiver.get(5, TimeUnit.SECONDS);
                break;
            } catch (TimeoutException stillWaiting) {
                System.out.printf("the receiver is still waiting: C sender, attempt %d%n", attempt);
                sender = ToolRuns.finish(start(senderImpl, "mckey", senderArgs));
            }
        }
        Run r = ToolRuns.finish(receiver);
        assertThat(r.status()).as("%s", r).isZero();
        assertThat(sender.status()).as("%s", sender).isZero();
        return List.of(r, sender);
    }

    private static int ipv4(String dotted) {
        int v = 0;
        for (String part : dotted.split("\\.")) {
            v = v << 8 | Integer.parseInt(part);
        }
        return v;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("waited " + DEADLINE + " for " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20); // polling interval of the condition
        }
    }

    // ------------------------------------------------------------------ the harness

    private CompletableFuture<Run> start(Impl impl, String tool, List<String> args) throws IOException {
        return start(impl, tool, args, new StringWriter());
    }

    private CompletableFuture<Run> start(Impl impl, String tool, List<String> args, StringWriter out)
            throws IOException {
        return ToolRuns.tool(dir, impl == Impl.JAVA, tool, args, out);
    }
}
