package dev.rdma4j.tools;

import static dev.rdma4j.tools.ToolRuns.awaitListening;
import static dev.rdma4j.tools.ToolRuns.finish;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.Device;
import dev.rdma4j.tools.ToolRuns.Run;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Hostile clients of every tool's TCP listener (issue 12): the pingpong servers ({@code rc}, {@code uc},
 * {@code ud}, {@code srq}) and the {@code perf} server, each sent garbage or a connection closed at once
 * from a raw socket: the tool prints what is wrong and exits with status 1, as the C tool would, instead of
 * hanging or connecting its QP to garbage. (A silent or slow client is cut off after
 * {@link BoundedInput#SERVER_TIMEOUT}; {@code PingpongExchangeTest} shows it with a short timeout.)
 */
@Tag("device")
class ToolListenersDeviceTest {
    private static final AtomicInteger PORT = new AtomicInteger(18_900 + (int) (ProcessHandle.current().pid() % 50) * 10);
    private static String device;

    @BeforeAll
    static void findDevice() throws Exception {
        device = Device.byNameOrDefault(null).name();
    }

    /** What a raw client does on its socket before it half-closes. */
    @FunctionalInterface
    private interface Client {
        void talk(Socket s) throws java.io.IOException;
    }

    /** Starts {@code argv -p PORT}, sends {@code bytes} from a raw socket and closes it; the server's run. */
    private static Run serverAgainst(List<String> argv, byte[] bytes) throws Exception {
        return serverAgainst(argv, s -> {
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
        });
    }

    private static Run serverAgainst(List<String> argv, Client client) throws Exception {
        int port = PORT.getAndIncrement();
        List<String> full = new ArrayList<>(argv);
        full.addAll(List.of("-p", Integer.toString(port)));
        CompletableFuture<Run> server = ToolRuns.java(String.join(" ", full), full);
        awaitListening(port, server);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            client.talk(s);
            s.shutdownOutput();
            return finish(server);
        }
    }

    private static byte[] garbage(int n) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) 'z');
        return b;
    }

    @Test
    void pingpongServersRefuseGarbageAndAClientThatLeaves() throws Exception {
        for (String tool : List.of("rc-pingpong", "uc-pingpong", "ud-pingpong", "srq-pingpong")) {
            List<String> argv = List.of(tool, "-d", device, "-g", "1");
            Run r = serverAgainst(argv, garbage(tool.equals("srq-pingpong") ? 256 * 52 : 52));
            assertThat(r.status()).as("%s", r).isEqualTo(1);
            assertThat(r.err()).as("%s", r).contains("Malformed remote address \"zzzz");
            r = serverAgainst(argv, new byte[0]);
            assertThat(r.status()).as("%s", r).isEqualTo(1);
            assertThat(r.err()).as("%s", r).contains("short read").contains("Couldn't read remote address");
        }
    }

    @Test
    void perfServerRefusesGarbageATruncatedOfferAndAClientThatLeaves() throws Exception {
        List<String> argv = List.of("perf", "send_lat", "-d", device, "-n", "10");
        Run r = serverAgainst(argv, new byte[0]);
        assertThat(r.status()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).contains("Couldn't exchange parameters").contains("EOFException");
        r = serverAgainst(argv, "\0\u0003abc".getBytes(StandardCharsets.ISO_8859_1));
        assertThat(r.status()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).contains("the peer runs 'abc'");
        // the server's own parameters echoed (they agree), then a truncated endpoint offer
        r = serverAgainst(argv, s -> {
            String theirs = new java.io.DataInputStream(s.getInputStream()).readUTF();
            java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
            out.writeUTF(theirs);
            out.write(java.util.HexFormat.of().parseHex("72646d61346a000100"));
            out.flush();
        });
        assertThat(r.status()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).contains("Couldn't exchange endpoints")
                .contains("closed the connection after 9 bytes");
    }
}
