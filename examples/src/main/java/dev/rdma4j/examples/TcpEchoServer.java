package dev.rdma4j.examples;

import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
import java.io.EOFException;
import java.net.InetSocketAddress;

/** An RC echo server over a TCP exchange of endpoints: sends each message back; serves CLIENTS clients one after another. */
public final class TcpEchoServer {
    public static void main(String[] args) throws Exception { // ADDRESS PORT CLIENTS
        var address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        var options = RdmaOptions.builder().exchange(RdmaOptions.Exchange.TCP).build();
        try (RdmaServer server = RdmaServer.listen(address, options)) {
            System.out.println("listening on " + server.localAddress());
            for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                try (RdmaConnection c = server.accept()) {
                    int echoed = 0;
                    try {
                        while (true) {
                            try (Message m = c.receive()) {
                                c.send(m.data());
                                echoed++;
                            }
                        }
                    } catch (EOFException clientLeft) {
                        System.out.println("echoed " + echoed + " messages to " + c.peerAddress());
                    }
                }
            }
        }
    }
}
