package dev.rdma4j.twohost;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The host a two-host test runs on, from the environment {@code scripts/softroce --hosts 2} gives every
 * guest ({@code SOFTROCE_HOST}, {@code SOFTROCE_ADDR}, {@code SOFTROCE_PEER}, {@code SOFTROCE_NETDEV}), the
 * wire's shaping ({@code tc netem}, {@code ip link}), and a control channel to the other host: a TCP
 * connection over the same wire on which the two halves of a test meet at barriers and pass values.
 * There is no skip: outside a two-host run the tests fail, saying how to run them.
 */
final class TwoHost {
    /** How long one side waits for the other at a barrier: generous, the guests are emulated. */
    static final Duration BARRIER = Duration.ofMinutes(4);

    private TwoHost() {
    }

    static int host() {
        return Integer.parseInt(env("SOFTROCE_HOST"));
    }

    static boolean isServer() {
        return host() == 1;
    }

    static String addr() {
        return env("SOFTROCE_ADDR");
    }

    static String peer() {
        return env("SOFTROCE_PEER");
    }

    static String netdev() {
        return env("SOFTROCE_NETDEV");
    }

    private static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty() || System.getenv("SOFTROCE_HOSTS") == null
                || Integer.parseInt(System.getenv("SOFTROCE_HOSTS")) < 2) {
            throw new AssertionError("two-host tests run on two guests: scripts/two-host-tests ($" + name + " unset)");
        }
        return v;
    }

    /** Replaces the netem discipline on this host's wire interface; {@code null} removes any. */
    static void netem(String spec) {
        if (spec == null) {
            run(true, "tc", "qdisc", "del", "dev", netdev(), "root");
        } else {
            List<String> cmd = new ArrayList<>(List.of("tc", "qdisc", "replace", "dev", netdev(), "root", "netem"));
            cmd.addAll(List.of(spec.split(" ")));
            run(false, cmd.toArray(String[]::new));
        }
    }

    /** {@code ip link set NETDEV up|down} on this host. */
    static void link(boolean up) {
        run(false, "ip", "link", "set", netdev(), up ? "up" : "down");
    }

    private static void run(boolean mayFail, String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("%s finished", String.join(" ", cmd)).isTrue();
            if (!mayFail) {
                assertThat(p.exitValue()).as("%s: %s", String.join(" ", cmd), out).isZero();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Leaves a mark (an empty file) in the directory both hosts share ({@code $RDMA4J_TWO_HOST_SHARED}, on the
     * host's tree): a signal that needs no network, for when this host's link is down.
     */
    static void mark(String name) {
        try {
            Path tmp = shared().resolve(name + ".h" + host() + ".tmp");
            Files.writeString(tmp, Long.toString(System.currentTimeMillis()));
            Files.move(tmp, shared().resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits for the other host's {@link #mark}; fails after {@code deadline}. */
    static void awaitMark(String name, Duration deadline) throws InterruptedException {
        Path p = shared().resolve(name);
        long end = System.nanoTime() + deadline.toNanos();
        while (!Files.exists(p)) {
            assertThat(System.nanoTime()).as("the other host's mark %s within %s", p, deadline).isLessThan(end);
            Thread.sleep(50);
        }
    }

    private static Path shared() {
        return Path.of(env("RDMA4J_TWO_HOST_SHARED"));
    }

    static InetSocketAddress peerAt(int port) {
        return new InetSocketAddress(peer(), port);
    }

    static InetSocketAddress localAt(int port) {
        return new InetSocketAddress(addr(), port);
    }

    /**
     * The control channel of one test: host 1 listens on {@code port}, host 2 connects (retrying while
     * host 1 is not listening yet). Lines of text; every read is bounded by {@link #BARRIER}.
     */
    static final class Control implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final PrintWriter out;

        private Control(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout((int) BARRIER.toMillis());
            socket.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        static Control open(int port) throws IOException, InterruptedException {
            if (isServer()) {
                try (ServerSocket ss = new ServerSocket()) {
                    ss.setReuseAddress(true);
                    ss.bind(new InetSocketAddress(InetAddress.getByName(addr()), port));
                    ss.setSoTimeout((int) BARRIER.toMillis());
                    return new Control(ss.accept());
                }
            }
            long deadline = System.nanoTime() + BARRIER.toNanos();
            while (true) {
                Socket s = new Socket();
                try {
                    s.connect(peerAt(port), 10_000);
                    return new Control(s);
                } catch (ConnectException e) {
                    s.close();
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(200);
                }
            }
        }

        /** Both sides reach {@code name} before either goes on. */
        void barrier(String name) throws IOException {
            send("barrier " + name);
            assertThat(receive()).as("the other host at the barrier").isEqualTo("barrier " + name);
        }

        void send(String line) {
            out.println(line);
        }

        String receive() throws IOException {
            String line = in.readLine();
            if (line == null) {
                throw new IOException("the other host closed the control channel");
            }
            return line;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
