package dev.rdma4j.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code rdma4j demo} on the device: exits 0 and verifies every data-path operation it shows. */
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
        assertThat(out.lines().filter(l -> l.trim().startsWith("verified:")).count()).isEqualTo(14);
        for (String op : new String[] {"bob received 34 bytes", "equal alice's pattern", "RDMA_READ",
            "RECV_RDMA_WITH_IMM, immediate 0xbadcafe", "fetch-and-add 2: alice got the old value 40",
            "compare-and-swap 42 -> 100: old value 42", "private data \"alice wants to talk\"",
            "8 RDMA writes in flight at once", "counter now 7", "his queue pair is now ERROR",
            "private receive queues: 128 receives posted, 32768 bytes registered",
            "one SRQ (K = 2):        16 receives posted, 4096 bytes registered",
            "128 messages received through 16 SRQ receives"}) {
            assertThat(out).contains(op);
        }
    }
}
