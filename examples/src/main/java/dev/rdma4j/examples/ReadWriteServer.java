package dev.rdma4j.examples;

import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import dev.rdma4j.net.RdmaServer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

/**
 * One-sided RDMA, the passive side: exposes a 1 MiB region holding a pattern (its address and rkey travel in
 * the connection's set-up), then does nothing until the client says it is done: the client reads the pattern
 * with RDMA read and writes its own with RDMA write, without this side posting anything. Then it checks what
 * was written and answers with the count of bytes that matched.
 */
public final class ReadWriteServer {
    static final int SIZE = 1 << 20;

    public static void main(String[] args) throws Exception { // ADDRESS PORT
        var address = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        var options = RdmaOptions.builder().exposeRegion(SIZE).build();
        try (RdmaServer server = RdmaServer.listen(address, options)) {
            System.out.println("listening on " + server.localAddress());
            try (RdmaConnection c = server.accept()) {
                MemorySegment region = c.region().segment();
                for (int i = 0; i < SIZE; i++) {
                    region.set(ValueLayout.JAVA_BYTE, i, (byte) (i % 251)); // what the client reads
                }
                c.send(new byte[] {1}); // ready
                try (Message done = c.receive()) {
                    System.out.println("the client says it is done (" + done.length() + " byte)");
                    int matched = 0;
                    for (int i = 0; i < SIZE; i++) {
                        matched += region.get(ValueLayout.JAVA_BYTE, i) == (byte) (i % 13) ? 1 : 0;
                    }
                    System.out.println("the client wrote " + matched + " of " + SIZE + " bytes as expected");
                    c.send(MemorySegment.ofArray(new int[] {matched}));
                }
            }
        }
    }
}
