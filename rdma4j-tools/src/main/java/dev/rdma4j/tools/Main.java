package dev.rdma4j.tools;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code bin/rdma4j}: one picocli subcommand per tool; the tools use only rdma4j's public API. A run builds the
 * command model of the one tool it runs (picocli reads every option of every subcommand it is given, which in
 * the emulated guest took longer than the JVM's own start: {@code devinfo} 16.6 s against {@code java -version}'s
 * 2.2 s); {@code --help}, {@code help} and an unknown command get all of them.
 *
 * <p>Threading: a run is single-threaded up to the tool, which says its own.
 */
@Command(name = "rdma4j", mixinStandardHelpOptions = true, version = "rdma4j 0.1.0",
        description = "RDMA verbs tools on rdma4j (Java FFM).")
public final class Main {
    /** The tools, by the name their {@code @Command} gives, in the order the usage lists them. */
    private static final Map<String, Class<?>> TOOLS = new LinkedHashMap<>();

    static {
        TOOLS.put("devinfo", DevInfoCommand.class);
        TOOLS.put("demo", dev.rdma4j.tools.demo.DemoCommand.class);
        TOOLS.put("rc-pingpong", dev.rdma4j.tools.pingpong.RcPingpongCommand.class);
        TOOLS.put("rping", dev.rdma4j.tools.rping.RpingCommand.class);
        TOOLS.put("udaddy", dev.rdma4j.tools.datagram.UdaddyCommand.class);
        TOOLS.put("mckey", dev.rdma4j.tools.datagram.MckeyCommand.class);
        TOOLS.put("ucmatose", dev.rdma4j.tools.cmatose.CmatoseCommand.class);
        TOOLS.put("uc-pingpong", dev.rdma4j.tools.pingpong.UcPingpongCommand.class);
        TOOLS.put("ud-pingpong", dev.rdma4j.tools.pingpong.UdPingpongCommand.class);
        TOOLS.put("srq-pingpong", dev.rdma4j.tools.pingpong.SrqPingpongCommand.class);
        TOOLS.put("perf", dev.rdma4j.tools.perf.PerfCommand.class);
        TOOLS.put("perf-report", dev.rdma4j.tools.perf.PerfReportCommand.class);
        TOOLS.put("net-pingpong", dev.rdma4j.tools.perf.NetPingpongCommand.class);
        TOOLS.put("help", CommandLine.HelpCommand.class);
    }

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
        Class<?> tool = args.length > 0 && !args[0].equals("help") ? TOOLS.get(args[0]) : null;
        CommandLine cl = tool != null ? new CommandLine(new Main()).addSubcommand(args[0], tool) : commandLine();
        return cl.setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    // A tool reports the failure in one line, like the C tools; RDMA4J_DEBUG=1 adds the trace.
                    cmd.getErr().println(cmd.getCommandName() + ": " + e.getMessage());
                    if (System.getenv("RDMA4J_DEBUG") != null) {
                        e.printStackTrace(cmd.getErr());
                    }
                    return 1;
                }).execute(args);
    }

    /**
     * The whole command, every tool a subcommand (what {@code --help} lists).
     *
     * @return a new command line
     */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        TOOLS.forEach(cl::addSubcommand);
        return cl;
    }
}
