package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.Main;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What {@code srq-pingpong} refuses before touching a device, with ibv_srq_pingpong's messages. */
class SrqPingpongCommandTest {
    private record Result(int status, String out, String err) {
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    @Test
    void needsOneReceivePerQp() {
        Result r = run("srq-pingpong", "-q", "9", "-r", "8");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).isEqualTo(
                "rx_depth 8 is too small for 9 QPs -- must have at least one receive per QP." + System.lineSeparator());
    }

    @Test
    void atMost255Qps() {
        Result r = run("srq-pingpong", "-q", "256", "-r", "1000");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("num_qp 256 must be less than 255" + System.lineSeparator()); // sic
    }

    @Test
    void badSizePortOrMtuPrintsTheUsage() {
        for (String[] args : new String[][] {{"-s", "0"}, {"-p", "65536"}, {"-m", "1000"}, {"-i", "0"}}) {
            Result r = run("srq-pingpong", args[0], args[1]);
            assertThat(r.status()).as(args[0]).isEqualTo(1);
            assertThat(r.out()).as(args[0]).contains("Usage:").contains("--num-qp");
        }
    }

    @Test
    void odpIsRefusedAndEventsExplained() {
        Result r = run("srq-pingpong", "-o");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains("-o/--odp").contains("not supported by rdma4j");
        assertThat(run("srq-pingpong", "--help").out()).contains("sleep on CQ events").contains("--num-qp")
                .contains("--chk");
    }
}
