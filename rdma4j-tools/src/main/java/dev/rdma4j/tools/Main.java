package dev.rdma4j.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/rdma4j}: one picocli subcommand per tool; the tools use only rdma4j's public API. */
@Command(name = "rdma4j", mixinStandardHelpOptions = true, version = "rdma4j 0.1.0",
        description = "RDMA verbs tools on rdma4j (Java FFM).",
        subcommands = {DevInfoCommand.class, DemoCommand.class, RcPingpongCommand.class,
                dev.rdma4j.tools.rping.RpingCommand.class,
                UcPingpongCommand.class, UdPingpongCommand.class, SrqPingpongCommand.class,
                dev.rdma4j.tools.perf.PerfCommand.class, dev.rdma4j.tools.perf.PerfReportCommand.class,
                dev.rdma4j.tools.perf.NetPingpongCommand.class,
                CommandLine.HelpCommand.class})
public final class Main {
    private Main() {
    }

    /**
     * Runs a tool and exits with its status.
     *
     * @param args the subcommand and its options
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs a tool without exiting, for tests.
     *
     * @param args the subcommand and its options
     * @return the exit status
     */
    public static int run(String... args) {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    // A tool reports the failure in one line, like the C tools; RDMA4J_DEBUG=1 adds the trace.
                    cmd.getErr().println(cmd.getCommandName() + ": " + e.getMessage());
                    if (System.getenv("RDMA4J_DEBUG") != null) {
                        e.printStackTrace(cmd.getErr());
                    }
                    return 1;
                }).execute(args);
    }
}
