package dev.rdma4j.tools.cmatose;

import dev.rdma4j.VerbsException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code rdma4j ucmatose}: librdmacm's {@code ucmatose} ({@code cmatose.c}, rdma-core 44) on rdma4j: the same
 * exchange on the wire, the same lines on stdout and the same exit statuses, interoperable with the C tool in both
 * roles.
 *
 * <p>The server ({@code run_server}) listens ({@code rdma_bind_addr}, {@code rdma_listen}), accepts {@code -c}
 * connections, each with its receives posted before {@code rdma_accept}; once all are established it posts
 * {@code -C} sends of {@code -S} bytes on each ({@code ibv_post_send}), waits for their completions, then for the
 * client's {@code -C} messages on each, and disconnects ({@code rdma_disconnect}). The client ({@code run_client},
 * {@code -s}) connects {@code -c} times ({@code rdma_resolve_addr}, {@code rdma_resolve_route},
 * {@code rdma_create_qp}, the receives, {@code rdma_connect}), waits for the server's messages, sends as many back
 * and waits until the server disconnected.
 *
 * <p>The options are parsed as {@code getopt(argc, argv, "s:b:f:P:c:C:S:t:p:a:m")} does, numbers with
 * {@code atoi}; an unknown option or a missing argument prints getopt's message on stderr and the C tool's usage on
 * stdout, and exits with 1. Beyond the C tool there is {@code --help}. What rdma4j's rdma_cm API cannot do is
 * refused before anything runs, with a message on stderr and status 1: {@code -t} on the client
 * ({@code rdma_set_option(RDMA_OPTION_ID_TOS)}; the C server ignores {@code -t}, and so does this one), {@code -a}
 * ({@code RDMA_OPTION_ID_ACK_TIMEOUT}), {@code -m} ({@code rdma_migrate_id}), {@code -P ib} ({@code RDMA_PS_IB})
 * and {@code -f gid} ({@code AF_IB} addresses).
 */
@Command(name = "ucmatose", exitCodeOnUsageHelp = 0, exitCodeOnInvalidInput = 1,
        customSynopsis = {"ucmatose [-s server_address] [-b bind_address] [-f address_format]",
                "         [-P port_space] [-c connections] [-C message_count]",
                "         [-S message_size] [-t type_of_service] [-p port_number] [-m]",
                "         [-a ack_timeout]"},
        description = {"RDMA CM connections and SENDs, like librdmacm's ucmatose (interoperable).",
                "The server without -s, the client with it. The options, parsed as the C",
                "tool's getopt parses them:",
                "  -s server_address  be the client of that server",
                "  -b bind_address    the server's address to listen on (default: any",
                "                     IPv4 address); the client's source address",
                "  -f address_format  name (default), ip or ipv6: numeric addresses only;",
                "                     gid is refused (rdma4j has no AF_IB addresses)",
                "  -P port_space      tcp (default); ib is refused (rdma4j's rdma_cm ids",
                "                     are RDMA_PS_TCP)",
                "  -c connections     connections to make or accept (default 1)",
                "  -C message_count   messages each side sends on each one (default 10)",
                "  -S message_size    their size in bytes (default 100; 0: none)",
                "  -t type_of_service refused on the client (rdma4j has no",
                "                     rdma_set_option(RDMA_OPTION_ID_TOS)); the server",
                "                     ignores it, as the C tool's does",
                "  -p port_number     port, or TCP service name (default 7471)",
                "  -m                 refused (rdma4j has no rdma_migrate_id)",
                "  -a ack_timeout     refused (rdma4j has no",
                "                     rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT))",
                "Exit status: the C tool's return value as a byte (0; an rdma_cm event's",
                "status; -1 as 255; a getaddrinfo error, e.g. -2 as 254); 1 for an",
                "unknown option, a missing argument or a refused option."})
public final class CmatoseCommand implements Callable<Integer> {
    /** The program name in getopt's messages and the usage, as the C tool shows its {@code argv[0]}. */
    static final String PROGRAM = "ucmatose";
    /** {@code cmatose.c}'s getopt string. */
    static final String OPTSTRING = "s:b:f:P:c:C:S:t:p:a:m";
    /** The status when the calling thread is interrupted (as for SIGINT). */
    static final int INTERRUPTED = 130;

    @Spec
    CommandSpec spec;

    @Option(names = "--help", usageHelp = true, description = "show this help and exit (not in the C tool)")
    boolean help;

    /** Every argument: they are parsed as getopt parses them. */
    @Unmatched
    List<String> arguments = new ArrayList<>();

    /** For picocli. */
    public CmatoseCommand() {
    }

    /**
     * Parses the options and runs the server or the client.
     *
     * @return the exit status: the C tool's return value, as a byte
     * @throws VerbsException if the completion engine cannot be created
     */
    @Override
    public Integer call() throws VerbsException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            List<String> original = spec.commandLine().getParseResult() == null ? List.of()
                    : spec.commandLine().getParseResult().originalArgs();
            Parsed parsed = parse(rawArguments(original, arguments), out, err);
            if (parsed.options() == null) {
                return parsed.status();
            }
            return new CmatoseRunner(parsed.options(), out, err).run() & 0xff;
        } catch (InterruptedException e) {
            // only in-process (tests); from a shell, SIGINT ends the JVM with this status too
            Thread.currentThread().interrupt();
            return INTERRUPTED;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * The outcome of option parsing: the settings to run with, or the status to exit with.
     *
     * @param options the settings, or {@code null} when the run ends here
     * @param status  the exit status when {@code options} is {@code null}
     */
    record Parsed(CmatoseOptions options, int status) {
    }

    /**
     * The arguments as the user gave them: picocli takes the first {@code --} away from those it could not match,
     * but getopt must see it (what follows it is no option).
     *
     * @param original  the whole command line picocli parsed
     * @param unmatched the arguments picocli left
     * @return {@code unmatched}, with its {@code --} back if picocli took one
     */
    static List<String> rawArguments(List<String> original, List<String> unmatched) {
        int m = unmatched.size();
        if (original.size() > m) {
            List<String> tail = original.subList(original.size() - m - 1, original.size());
            List<String> withoutDashes = new ArrayList<>(tail);
            if (withoutDashes.remove("--") && withoutDashes.equals(unmatched)) {
                return tail;
            }
        }
        return unmatched;
    }

    /**
     * {@code main}'s option loop: each option as the C tool handles it, in order ({@code -f} and {@code -P} warn on
     * stderr of a value they do not know, and go on), then what rdma4j refuses.
     *
     * @param args the arguments after the command's name
     * @param out  stdout, for the usage
     * @param err  stderr, for getopt's and the warnings' messages
     * @return the settings, or the exit status
     */
    static Parsed parse(List<String> args, PrintWriter out, PrintWriter err) {
        Getopt.Result result = Getopt.parse(PROGRAM, OPTSTRING, args);
        String server = null;
        String bind = null;
        String port = CmatoseOptions.DEFAULT_PORT;
        int connections = CmatoseOptions.DEFAULT_CONNECTIONS;
        int count = CmatoseOptions.DEFAULT_MESSAGE_COUNT;
        int size = CmatoseOptions.DEFAULT_MESSAGE_SIZE;
        boolean numeric = false;
        boolean gid = false;
        boolean ibPortSpace = false;
        boolean tos = false;
        boolean migrate = false;
        boolean ackTimeout = false;
        for (Getopt.Option o : result.options()) {
            String a = o.argument();
            switch (o.letter()) {
                case 's' -> server = a;
                case 'b' -> bind = a;
                case 'f' -> {
                    if (startsWith(a, "ip")) { // hints.ai_flags = RAI_NUMERICHOST
                        numeric = true;
                        gid = false;
                    } else if (startsWith(a, "gid")) { // RAI_NUMERICHOST | RAI_FAMILY, AF_IB
                        numeric = true;
                        gid = true;
                    } else if (!startsWith(a, "name")) {
                        err.println("Warning: unknown address format");
                    }
                }
                case 'P' -> {
                    if (startsWith(a, "ib")) {
                        ibPortSpace = true;
                    } else if (!startsWith(a, "tcp")) {
                        err.println("Warning: unknown port space format");
                    }
                }
                case 'c' -> connections = atoi(a);
                case 'C' -> count = atoi(a);
                case 'S' -> size = atoi(a);
                case 't' -> tos = true;
                case 'p' -> port = a;
                case 'm' -> migrate = true;
                case 'a' -> ackTimeout = true;
                default -> throw new IllegalStateException("getopt returned -" + o.letter());
            }
        }
        if (result.error() != null) {
            err.println(result.error());
            usage(out);
            return new Parsed(null, 1);
        }
        List<String> refused = new ArrayList<>();
        if (tos && server != null) {
            refused.add("-t (type of service) is not supported: rdma4j has no rdma_set_option(RDMA_OPTION_ID_TOS)");
        }
        if (ackTimeout) {
            refused.add("-a (ack timeout) is not supported: rdma4j has no "
                    + "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)");
        }
        if (migrate) {
            refused.add("-m (migrate to a new event channel) is not supported: rdma4j has no rdma_migrate_id");
        }
        if (ibPortSpace) {
            refused.add("-P ib (the RDMA_PS_IB port space) is not supported: rdma4j's rdma_cm ids are RDMA_PS_TCP");
        }
        if (gid) {
            refused.add("-f gid (AF_IB addresses) is not supported: rdma4j's rdma_cm takes IP addresses");
        }
        if (!refused.isEmpty()) {
            refused.forEach(r -> err.printf("%s: %s%n", PROGRAM, r));
            return new Parsed(null, 1);
        }
        return new Parsed(new CmatoseOptions(server, bind, numeric, connections, count, size, port), 0);
    }

    /** The C tool's usage, printed for a bad option. */
    private static void usage(PrintWriter out) {
        out.println("usage: " + PROGRAM);
        for (String line : List.of("[-s server_address]", "[-b bind_address]", "[-f address_format]",
                "    name, ip, ipv6, or gid", "[-P port_space]", "    tcp or ib", "[-c connections]",
                "[-C message_count]", "[-S message_size]", "[-t type_of_service]", "[-p port_number]",
                "[-m(igrate)]", "[-a ack_timeout]")) {
            out.println("\t" + line);
        }
    }

    /** {@code !strncasecmp(word, s, word.length())}. */
    private static boolean startsWith(String s, String word) {
        return s.regionMatches(true, 0, word, 0, word.length());
    }

    /**
     * C's {@code atoi}: see {@link dev.rdma4j.tools.CNumberConverter#atoi}.
     *
     * @param s the text
     * @return the number
     */
    static int atoi(String s) {
        return dev.rdma4j.tools.CNumberConverter.atoi(s);
    }
}
