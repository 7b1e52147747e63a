package dev.rdma4j.examples;

import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import java.net.InetSocketAddress;
import java.util.Arrays;

/** An RC echo client over a TCP exchange of endpoints: sends COUNT messages and checks that each comes back. */
public final class TcpEchoClient {
    public static void main(String[] args) throws Exception { // ADDRESS PORT COUNT
        var server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int count = Integer.parseInt(args[2]);
        var options = RdmaOptions.builder().exchange(RdmaOptions.Exchange.TCP).build();
        try (RdmaConnection c = RdmaClient.connect(server, options)) {
            for (int i = 0; i < count; i++) {
                byte[] ping = ("ping " + i).getBytes();
                c.send(ping);
                try (Message reply = c.receive()) {
                    if (!Arrays.equals(reply.bytes(), ping)) {
                        throw new IllegalStateException("reply " + i + " is " + new String(reply.bytes()));
                    }
                }
            }
            System.out.println(count + " messages echoed by " + c.peerAddress());
        }
    }
}
