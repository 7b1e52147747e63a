package dev.rdma4j.tools.pingpong;

import dev.rdma4j.tools.Main;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What the pingpong tools refuse before touching a device. */
class PingpongCommandTest {
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
    void eventsAreAcceptedAndExplained() {
        for (String tool : new String[] {"rc-pingpong", "uc-pingpong", "ud-pingpong"}) {
            Result r = run(tool, "-e", "-d", "nosuchdevice");
            assertThat(r.status()).isEqualTo(1);
            assertThat(r.err()).doesNotContain("not supported").isNotEmpty(); // fails on the device, not on -e
            assertThat(run(tool, "--help").out()).contains("--events").contains("sleep on CQ events")
                    .contains("epoll");
        }
    }

    @Test
    void rcOnlyExtrasAreRefused() {
        for (String flag : new String[] {"-o", "-O", "-P", "-t", "-j", "-N", "--odp", "--new_send"}) {
            Result r = run("rc-pingpong", flag);
            assertThat(r.status()).as(flag).isEqualTo(1);
            assertThat(r.err()).as(flag).contains("is not supported by rdma4j");
        }
    }

    @Test
    void optionsTheCToolLacksAreInvalid() {
        assertThat(run("uc-pingpong", "-o").status()).isEqualTo(1);
        assertThat(run("ud-pingpong", "-m", "1024").status()).isEqualTo(1);
        assertThat(run("rc-pingpong", "host1", "host2").status()).isEqualTo(1);
    }

    @Test
    void badPortOrMtuPrintsTheUsageAndExits1() {
        Result port = run("rc-pingpong", "-p", "65536");
        assertThat(port.status()).isEqualTo(1);
        assertThat(port.out()).contains("Usage:").contains("--port");
        assertThat(run("uc-pingpong", "-m", "1000").status()).isEqualTo(1);
        assertThat(run("ud-pingpong", "-i", "0").status()).isEqualTo(1);
        assertThat(run("rc-pingpong", "--mtu=0x1000", "-p", "0x10000").out()).contains("Usage:"); // strtol: hex
    }
}
