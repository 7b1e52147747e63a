package dev.rdma4j.examples;

import dev.rdma4j.net.Message;
import dev.rdma4j.net.RdmaClient;
import dev.rdma4j.net.RdmaConnection;
import dev.rdma4j.net.RdmaOptions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

/**
 * One-sided RDMA, the active side: reads the server's whole region with RDMA read into its own exposed region
 * and checks the pattern, writes another pattern into the server's region with RDMA write, then tells the
 * server, which checks it.
 */
public final class ReadWriteClient {
    public static void main(String[] args) throws Exception { // ADDRESS PORT
        var server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int size = ReadWriteServer.SIZE;
        try (RdmaConnection c = RdmaClient.connect(server, RdmaOptions.builder().exposeRegion(size).build())) {
            c.receive().close(); // the server's pattern is in place
            MemorySegment mine = c.region().segment();
            c.read(0, 0, size); // RDMA read: the server's region into mine
            for (int i = 0; i < size; i++) {
                if (mine.get(ValueLayout.JAVA_BYTE, i) != (byte) (i % 251)) {
                    throw new IllegalStateException("byte " + i + " read from the server differs");
                }
                mine.set(ValueLayout.JAVA_BYTE, i, (byte) (i % 13));
            }
            c.write(0, 0, size); // RDMA write: mine into the server's region
            c.send(new byte[] {2}); // done
            try (Message answer = c.receive()) {
                int matched = answer.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0);
                System.out.println("read " + size + " bytes, wrote " + size + "; the server saw " + matched);
                if (matched != size) {
                    throw new IllegalStateException("the server saw " + matched + " bytes of " + size);
                }
            }
        }
    }
}
