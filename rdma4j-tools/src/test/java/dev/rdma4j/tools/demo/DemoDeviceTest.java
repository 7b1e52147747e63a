package dev.rdma4j.tools.demo;

import dev.rdma4j.tools.Main;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code rdma4j demo} on the device: exits 0 and verifies every data-path operation it shows, and its gRPC part's
 * answer came back over the RDMA connection alice opened.
 */
@Tag("device")
class DemoDeviceTest {

    @Test
    void demoVerifiesEveryOperation() {
        PrintStream saved = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc;
        try (PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            rc = Main.run("demo");
        } finally {
            System.setOut(saved);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        saved.print(out);
        assertThat(rc).isZero();
        assertThat(out).contains("state ACTIVE").contains("alice: RTS").doesNotContain("MISMATCH");
        assertThat(out.lines().filter(l -> l.trim().startsWith("verified:")).count()).isEqualTo(21);
        for (String op : new String[] {"bob received 34 bytes", "equal alice's pattern", "RDMA_READ",
            "RECV_RDMA_WITH_IMM, immediate 0xbadcafe", "fetch-and-add 2: alice got the old value 40",
            "compare-and-swap 42 -> 100: old value 42", "private data \"alice wants to talk\"",
            "8 RDMA writes in flight at once", "counter now 7", "his queue pair is now ERROR",
            "private receive queues: 128 receives posted, 32768 bytes registered",
            "one SRQ (K = 2):        16 receives posted, 4096 bytes registered",
            "128 messages received through 16 SRQ receives",
            "alice's write through the window landed in bob's bytes 1024.. (SUCCESS)",
            "after bob's invalidate, alice's next write is refused (REM_ACCESS_ERR) and bob's bytes are unchanged",
            "bob received \"hello, group\" from alice's QP #"}) {
            assertThat(out).contains(op);
        }
        // gRPC: bob's answer names the address his transport saw the call come from; it is the local address of
        // alice's one RdmaChannel, whose peer is the address bob serves on
        String served = group(out, "bob serves rdma4j\\.demo\\.Greeter on (\\S+) \\(rdma_bind_addr");
        String caller = group(out, "answer \"hello alice, this is bob over RDMA; your call came from (\\S+)\"");
        Matcher rdma = Pattern.compile("alice's only channel, RdmaChannel\\[\\S*/(\\S+) -> \\S*/(\\S+), ACTIVE[,\\]]")
                .matcher(out);
        assertThat(rdma.find()).as("alice's RdmaChannel in the output").isTrue();
        assertThat(rdma.group(1)).isEqualTo(caller);
        assertThat(rdma.group(2)).isEqualTo(served);
        assertThat(out).contains("bidi stream Shout [rdma, verbs, grpc] -> [RDMA, VERBS, GRPC], in order")
                .contains("verified: channel and server terminated; alice's RdmaChannel closed");
    }

    private static String group(String out, String regex) {
        Matcher m = Pattern.compile(regex).matcher(out);
        assertThat(m.find()).as("output matching " + regex).isTrue();
        return m.group(1);
    }
}
