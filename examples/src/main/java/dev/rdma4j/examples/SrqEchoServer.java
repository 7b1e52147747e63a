package dev.rdma4j.examples;

import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
import java.io.EOFException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * An echo server for many clients at once (rdma_cm), a virtual thread each, all receiving into one shared
 * receive queue of 64 buffers: the library posts them, reposts each as its message closes and re-arms the SRQ's
 * limit itself (no refill code, and the SRQ is never touched here). Closing each message promptly (try-with-resources)
 * is what keeps buffers posted: were all 64 held open, the SRQ would run dry and the server would log a WARNING.
 * At the end it prints what the SRQ did ({@code RdmaServer.sharedReceiveStats()}).
 */
public final class SrqEchoServer {
    public static void main(String[] args) throws Exception { // ADDRESS PORT CLIENTS
        var address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        var options = RdmaOptions.builder().sharedReceiveQueue(true).receiveBuffers(64).build();
        try (RdmaServer server = RdmaServer.listen(address, options)) {
            System.out.println("listening on " + server.localAddress());
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                RdmaConnection c = server.accept();
                clients.add(Thread.startVirtualThread(() -> echo(c)));
            }
            for (Thread t : clients) {
                t.join();
            }
            server.sharedReceiveStats().forEach(s -> System.out.println("shared receive queue: " + s));
        }
    }

    private static void echo(RdmaConnection c) {
        int echoed = 0;
        try (c) {
            while (true) {
                try (Message m = c.receive()) {
                    c.send(m.data());
                    echoed++;
                }
            }
        } catch (EOFException clientLeft) {
            System.out.println("echoed " + echoed + " messages to " + c.peerAddress());
        } catch (Exception e) {
            System.out.println("client " + c.peerAddress() + " failed: " + e);
        }
    }
}
