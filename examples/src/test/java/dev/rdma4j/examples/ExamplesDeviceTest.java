package dev.rdma4j.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.net.RdmaOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs every example as examples/run does (docs/GUIDE.md): each program in a JVM of its own, on the device's address, and
 * checks what it prints and that it exits 0.
 */
@Tag("device")
class ExamplesDeviceTest {
    @TempDir
    Path dir;

    @Test
    void theEchoExampleOverRdmaCm() throws Exception {
        echo(EchoServer.class, EchoClient.class, 2, 200);
    }

    @Test
    void theEchoExampleOverTcp() throws Exception {
        echo(TcpEchoServer.class, TcpEchoClient.class, 2, 200);
    }

    @Test
    void theSharedReceiveQueueServerWithFourClientsAtOnce() throws Exception {
        String ip = deviceAddress();
        String port = port();
        try (Program server = Program.start(dir, SrqEchoServer.class, ip, port, "4")) {
            server.awaitLine("listening on");
            List<Program> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                clients.add(Program.start(dir, EchoClient.class, ip, port, "300"));
            }
            for (Program c : clients) {
                assertThat(c.awaitExit()).as("client output:%n%s%nserver output:%n%s", c.output(), server.output())
                        .isZero();
                assertThat(c.output()).contains("300 messages echoed by");
                c.close();
            }
            assertThat(server.awaitExit()).as("server output:%n%s", server.output()).isZero();
            assertThat(server.output().lines().filter(l -> l.startsWith("echoed 300 messages to"))).hasSize(4);
        }
    }

    @Test
    void theOneSidedReadAndWriteExample() throws Exception {
        String ip = deviceAddress();
        String port = port();
        try (Program server = Program.start(dir, ReadWriteServer.class, ip, port);
             Program client = startAfter(server, ReadWriteClient.class, ip, port)) {
            assertThat(client.awaitExit()).as("client output:%n%s", client.output()).isZero();
            assertThat(client.output()).contains("read 1048576 bytes, wrote 1048576; the server saw 1048576");
            assertThat(server.awaitExit()).as("server output:%n%s", server.output()).isZero();
            assertThat(server.output()).contains("the client wrote 1048576 of 1048576 bytes as expected");
        }
    }

    /** rdma4j-netty: a Netty echo, two clients one after another, each's 16 KiB writes sent from registered memory. */
    @Test
    void theNettyEchoExampleOverRdmaNetty() throws Exception {
        String ip = deviceAddress();
        String port = port();
        try (Program server = Program.start(dir, NettyEchoServer.class, ip, port, "2")) {
            server.awaitLine("listening on");
            for (int i = 0; i < 2; i++) {
                try (Program client = Program.start(dir, NettyEchoClient.class, ip, port, "100")) {
                    assertThat(client.awaitExit()).as("client output:%n%s%nserver output:%n%s", client.output(),
                            server.output()).isZero();
                    // REGISTERED_ALLOCATOR's buffers, held by the channel only: every byte from them
                    assertThat(client.output()).contains("100 messages echoed by")
                            .contains("(1638400 bytes; sent zero-copy 1638400, copied 0)");
                }
            }
            assertThat(server.awaitExit()).as("server output:%n%s", server.output()).isZero();
            assertThat(server.output().lines().filter(l -> l.startsWith("echoed 1638400 bytes to"))).hasSize(2);
        }
    }

    /**
     * rdma4j-netty: the gRPC key-value service, 4 MiB values put and got back; gRPC's messages (in registered memory,
     * HTTP/2 DATA frames that are slices of them) leave without being copied, but for the frames' headers, frames
     * that span two of gRPC's buffers and pieces under 4 KiB (about 4%; every byte was copied before issue 33).
     */
    @Test
    void theGrpcKeyValueExampleOverRdmaNetty() throws Exception {
        String ip = deviceAddress();
        String port = port();
        try (Program server = Program.start(dir, GrpcKvServer.class, ip, port, "1");
             Program client = startAfter(server, GrpcKvClient.class, ip, port, "3")) {
            assertThat(client.awaitExit()).as("client output:%n%s%nserver output:%n%s", client.output(),
                    server.output()).isZero();
            assertThat(client.output()).contains("put and got back 3 values of 4194304 bytes from");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\(([0-9.]+) copied per byte sent\\)")
                    .matcher(client.output());
            assertThat(m.find()).as("client output:%n%s", client.output()).isTrue();
            assertThat(Double.parseDouble(m.group(1))).as("copied bytes per byte the client sent").isLessThan(0.1);
            assertThat(server.awaitExit()).as("server output:%n%s", server.output()).isZero();
            assertThat(server.output()).contains("served 3 puts and 3 gets");
        }
    }

    private void echo(Class<?> serverMain, Class<?> clientMain, int clients, int messages) throws Exception {
        String ip = deviceAddress();
        String port = port();
        try (Program server = Program.start(dir, serverMain, ip, port, String.valueOf(clients))) {
            server.awaitLine("listening on");
            for (int i = 0; i < clients; i++) { // one after another, as the server serves them
                try (Program client = Program.start(dir, clientMain, ip, port, String.valueOf(messages))) {
                    assertThat(client.awaitExit()).as("client output:%n%s%nserver output:%n%s", client.output(),
                            server.output()).isZero();
                    assertThat(client.output()).contains(messages + " messages echoed by");
                }
            }
            assertThat(server.awaitExit()).as("server output:%n%s", server.output()).isZero();
            assertThat(server.output().lines().filter(l -> l.startsWith("echoed " + messages + " messages to")))
                    .hasSize(clients);
        }
    }

    private Program startAfter(Program server, Class<?> main, String... args) throws Exception {
        server.awaitLine("listening on");
        return Program.start(dir, main, args);
    }

    private static String deviceAddress() throws Exception {
        try (Context ctx = Device.byNameOrDefault(null).open()) {
            return ctx.bestRoceGid(1).gid().ipv4().orElseThrow(() -> new AssertionError("no IPv4 GID on the device"))
                    .getHostAddress();
        }
    }

    private static String port() {
        return String.valueOf(20_000 + ThreadLocalRandom.current().nextInt(20_000));
    }

    /** A child JVM running an example's main, its output in a file; killed by close if still running. */
    record Program(Process process, Path log, String name) implements AutoCloseable {
        static final long DEADLINE_SECONDS = 400;

        static Program start(Path dir, Class<?> main, String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED"));
            if (System.getenv("RDMA4J_IN_GUEST") != null) {
                // the emulated device runs about 30 times slower, and other guests may share the cores: the
                // examples' 30 s deadlines (connecting four clients at once to a cold server) scaled
                cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                        "-D" + RdmaOptions.TIMEOUT_PROPERTY + "=PT3M"));
            }
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
            cmd.addAll(List.of(args));
            Path log = Files.createTempFile(dir, main.getSimpleName(), ".txt");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new Program(p, log, main.getSimpleName());
        }

        String output() throws IOException {
            return Files.readString(log);
        }

        void awaitLine(String prefix) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
            while (output().lines().noneMatch(l -> l.startsWith(prefix))) {
                assertThat(process.isAlive()).as("%s exited before printing '%s':%n%s", name, prefix, output())
                        .isTrue();
                assertThat(System.nanoTime()).as("%s printed no '%s' in %d s:%n%s", name, prefix, DEADLINE_SECONDS,
                        output()).isLessThan(deadline);
                Thread.sleep(50);
            }
        }

        int awaitExit() throws Exception {
            boolean done = process.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS);
            assertThat(done).as("%s still running after %d s (hung):%n%s", name, DEADLINE_SECONDS, output()).isTrue();
            return process.exitValue();
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }
}
