package dev.rdma4j.twohost;

import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmEventChannel;
import dev.rdma4j.connect.CmListener;
import dev.rdma4j.engine.CompletionEngine;
import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The programs a two-host test runs in a child JVM, to kill it at a chosen moment:
 * <ul>
 * <li>{@code stream ADDR PORT}: connects (rdma_cm), prints {@code connected}, then sends messages without
 * end (printing {@code sent N} every 20) while receiving what the server sends without giving the buffers
 * back, so that the server's later sends wait for buffers when the test kills it;</li>
 * <li>{@code hello ADDR PORT}: connects, sends {@code hello}, prints the reply, closes, exits 0;</li>
 * <li>{@code vanish ADDR PORT}: listens with rdma_cm, prints {@code request} when a connection request
 * arrives and then never answers it (the test kills it there).</li>
 * </ul>
 */
public final class PeerProgram {
    private PeerProgram() {
    }

    static RdmaOptions options() {
        return RdmaOptions.builder().messageSize(4096).receiveBuffers(32).sendBuffers(16).exposeRegion(1 << 20)
                .timeout(Duration.ofMinutes(3)).build();
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress at = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        switch (args[0]) {
            case "stream" -> {
                RdmaConnection c = RdmaClient.connect(at, options());
                System.out.println("connected");
                Thread.ofVirtual().start(() -> {
                    try {
                        List<Message> held = new ArrayList<>();
                        while (true) {
                            // held, not closed: once every receive buffer is held the server's sends wait (RNR)
                            held.add(c.receive());
                        }
                    } catch (Exception e) {
                        System.out.println("receive ended: " + e);
                    }
                });
                byte[] m = new byte[4096];
                for (long n = 1;; n++) {
                    c.send(m);
                    if (n % 20 == 0) {
                        System.out.println("sent " + n);
                    }
                }
            }
            case "hello" -> {
                try (RdmaConnection c = RdmaClient.connect(at, options())) {
                    c.send("hello".getBytes(StandardCharsets.UTF_8));
                    try (Message m = c.receive()) {
                        System.out.println("reply " + new String(m.bytes(), StandardCharsets.UTF_8));
                    }
                }
            }
            case "vanish" -> {
                try (CompletionEngine engine = CompletionEngine.builder().build();
                        CmEventChannel ch = CmEventChannel.create(engine);
                        CmListener l = CmListener.listen(ch, at, 4)) {
                    System.out.println("listening");
                    CmConnectionRequest r = l.nextRequestAsync().get(5, TimeUnit.MINUTES);
                    System.out.println("request " + r);
                    Thread.sleep(Duration.ofMinutes(10));
                }
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }
}
