package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.tools.Main;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** {@code perf --loopback}: the server child's command line, and what picocli hands the subcommand. */
class PerfLoopbackTest {

    @Test
    void theServerGetsTheArgumentsLessTheClientsOutputs() {
        assertThat(PerfLoopback.serverArgs(List.of("write_bw", "-a", "--loopback", "--plot", "out.png", "--json=r.json",
                "-p", "18600", "--warmup-time", "5")))
                .containsExactly("write_bw", "-a", "-p", "18600", "--warmup-time", "5");
        assertThat(PerfLoopback.serverArgs(List.of("send_lat", "--plot=x.png", "--json", "r.json", "-s", "64")))
                .containsExactly("send_lat", "-s", "64");
    }

    @Test
    void theChildIsThisJvmRunningTheToolsMain() {
        List<String> cmd = PerfLoopback.serverCommand(List.of("read_lat", "--loopback"));
        assertThat(cmd.getFirst()).endsWith("/bin/java");
        assertThat(cmd).containsSubsequence("-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "perf", "read_lat");
        assertThat(cmd).doesNotContain("--loopback");
    }

    @Test
    void theSubcommandsArgumentsAreThoseAfterPerf() {
        // what PerfCommand.call() reads: the parse result of `rdma4j perf ...` as Main parses it
        CommandLine cl = Main.commandLine();
        CommandLine.ParseResult top = cl.parseArgs("perf", "write_bw", "-a", "--loopback");
        List<String> original = top.subcommand().originalArgs();
        assertThat(PerfLoopback.afterCommand(original)).containsExactly("write_bw", "-a", "--loopback");
        assertThat(PerfLoopback.afterCommand(List.of("write_bw", "-a"))).containsExactly("write_bw", "-a");
    }

    @Test
    void loopbackTakesNoServerAddress() {
        PerfCommand cmd = new PerfCommand();
        new CommandLine(cmd).parseArgs("send_lat", "--loopback", "10.0.0.1");
        assertThatThrownBy(cmd::parameters).isInstanceOf(ParameterException.class)
                .hasMessageContaining("--loopback");
        PerfCommand ok = new PerfCommand();
        new CommandLine(ok).parseArgs("send_lat", "--loopback");
        assertThat(ok.parameters().isClient()).isFalse();
        assertThat(ok.parameters().asClientOf("127.0.0.1", 300).isClient()).isTrue();
        assertThat(ok.parameters().asClientOf("127.0.0.1", 300).connectSeconds()).isEqualTo(300);
    }
}
