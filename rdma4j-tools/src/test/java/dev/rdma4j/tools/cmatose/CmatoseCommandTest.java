package dev.rdma4j.tools.cmatose;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rdma4j.tools.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ucmatose's option parsing: getopt's rules, the C tool's values, messages and statuses, and what it refuses. */
class CmatoseCommandTest {
    /** What the C tool prints on stdout for a bad option (rdma-core 44's ucmatose, run in the guest). */
    private static final String USAGE = """
            usage: ucmatose
            \t[-s server_address]
            \t[-b bind_address]
            \t[-f address_format]
            \t    name, ip, ipv6, or gid
            \t[-P port_space]
            \t    tcp or ib
            \t[-c connections]
            \t[-C message_count]
            \t[-S message_size]
            \t[-t type_of_service]
            \t[-p port_number]
            \t[-m(igrate)]
            \t[-a ack_timeout]
            """;

    @TempDir
    Path dir;

    private record Result(int status, String out, String err) {
    }

    /** Runs {@code bin/rdma4j ucmatose args...} in-process. */
    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] full = new String[args.length + 1];
        full[0] = "ucmatose";
        System.arraycopy(args, 0, full, 1, args.length);
        int status = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(full);
        return new Result(status, out.toString(), err.toString());
    }

    /** The option loop alone (nothing runs), with what it printed on stderr. */
    private record Parse(CmatoseCommand.Parsed parsed, String out, String err) {
        CmatoseOptions options() {
            assertThat(parsed.options()).as("options of a good command line (stderr: %s)", err).isNotNull();
            return parsed.options();
        }
    }

    private static Parse parse(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CmatoseCommand.Parsed p = CmatoseCommand.parse(List.of(args), new PrintWriter(out, true),
                new PrintWriter(err, true));
        return new Parse(p, out.toString(), err.toString());
    }

    @Test
    void anUnknownOptionPrintsGetoptsMessageAndTheUsageAndExitsWithOne() {
        Result r = run("-x");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("ucmatose: invalid option -- 'x'\n");
        assertThat(r.out()).isEqualTo(USAGE);
        // -h is no option of the C tool either
        assertThat(run("-h")).isEqualTo(new Result(1, USAGE, "ucmatose: invalid option -- 'h'\n"));
        // in a group, after a good one (the rest of "-c2x" would be -c's argument)
        assertThat(run("-mx")).isEqualTo(new Result(1, USAGE, "ucmatose: invalid option -- 'x'\n"));
    }

    @Test
    void aMissingArgumentPrintsGetoptsMessageAndTheUsage() {
        assertThat(run("-C", "5", "-s")).isEqualTo(new Result(1, USAGE,
                "ucmatose: option requires an argument -- 's'\n"));
        assertThat(run("-p")).isEqualTo(new Result(1, USAGE, "ucmatose: option requires an argument -- 'p'\n"));
    }

    @Test
    void theDefaultsAreTheCTools() {
        CmatoseOptions o = parse().options();
        assertThat(o).isEqualTo(new CmatoseOptions(null, null, false, 1, 10, 100, "7471"));
        assertThat(o.client()).isFalse();
    }

    @Test
    void argumentsAttachedOrSeparateGroupedAndTheLastOneCounts() {
        CmatoseOptions o = parse("-s", "198.18.0.1", "-c2", "-C", "20", "-S1000", "-p", "7500", "-b198.18.0.1",
                "-C", "30").options();
        assertThat(o).isEqualTo(new CmatoseOptions("198.18.0.1", "198.18.0.1", false, 2, 30, 1000, "7500"));
        assertThat(o.client()).isTrue();
        // an argument is the next word whatever it looks like; atoi reads what it can
        assertThat(parse("-s", "-C", "-C", "-1", "-c", "3x", "-S", "junk").options())
                .isEqualTo(new CmatoseOptions("-C", null, false, 3, -1, 0, "7471"));
    }

    @Test
    void operandsAreSkippedAndDoubleDashEndsTheOptions() {
        assertThat(parse("junk", "-c", "4", "more").options().connections()).isEqualTo(4);
        CmatoseOptions o = parse("-c", "4", "--", "-s", "198.18.0.1").options();
        assertThat(o.client()).isFalse();
        assertThat(o.connections()).isEqualTo(4);
        // a lone "-" is an operand, not an option
        assertThat(parse("-", "-C3").options().messageCount()).isEqualTo(3);
    }

    /** picocli takes the first "--" away; getopt must see it. */
    @Test
    void theDoubleDashPicocliTookIsGivenBack() {
        assertThat(CmatoseCommand.rawArguments(List.of("ucmatose", "--", "-s", "a"), List.of("-s", "a")))
                .containsExactly("--", "-s", "a");
        assertThat(CmatoseCommand.rawArguments(List.of("ucmatose", "-c", "--", "-s"), List.of("-c", "-s")))
                .containsExactly("-c", "--", "-s");
        assertThat(CmatoseCommand.rawArguments(List.of("ucmatose", "-s", "a"), List.of("-s", "a")))
                .containsExactly("-s", "a");
        assertThat(CmatoseCommand.rawArguments(List.of(), List.of())).isEmpty();
    }

    @Test
    void addressFormatsAndPortSpacesAsTheCToolReadsThem() {
        assertThat(parse("-f", "ip").options().numericHost()).isTrue();
        assertThat(parse("-f", "IPv6").options().numericHost()).isTrue();
        assertThat(parse("-f", "name").options().numericHost()).isFalse();
        // "name" changes nothing, "ip" after "gid" drops AF_IB
        assertThat(parse("-f", "ip", "-f", "name").options().numericHost()).isTrue();
        assertThat(parse("-f", "gid", "-f", "ip").options().numericHost()).isTrue();
        assertThat(parse("-P", "tcp").options()).isNotNull();
        Parse unknown = parse("-f", "i", "-P", "udp");
        assertThat(unknown.options().numericHost()).isFalse();
        assertThat(unknown.err()).isEqualTo("Warning: unknown address format\nWarning: unknown port space format\n");
    }

    /** C prints a warning as it parses: before the message of a bad option that follows. */
    @Test
    void warningsComeBeforeALaterBadOption() {
        Result r = run("-f", "foo", "-q");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("Warning: unknown address format\nucmatose: invalid option -- 'q'\n");
        assertThat(r.out()).isEqualTo(USAGE);
    }

    @Test
    void whatRdma4jCannotDoIsRefusedWithStatusOne() {
        assertThat(run("-m")).isEqualTo(new Result(1, "",
                "ucmatose: -m (migrate to a new event channel) is not supported: rdma4j has no rdma_migrate_id\n"));
        assertThat(run("-s", "198.18.0.1", "-a", "14")).isEqualTo(new Result(1, "",
                "ucmatose: -a (ack timeout) is not supported: rdma4j has no "
                        + "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)\n"));
        assertThat(run("-s", "198.18.0.1", "-t", "0x20")).isEqualTo(new Result(1, "",
                "ucmatose: -t (type of service) is not supported: rdma4j has no "
                        + "rdma_set_option(RDMA_OPTION_ID_TOS)\n"));
        assertThat(run("-P", "ib")).isEqualTo(new Result(1, "",
                "ucmatose: -P ib (the RDMA_PS_IB port space) is not supported: rdma4j's rdma_cm ids are "
                        + "RDMA_PS_TCP\n"));
        // "tcp" after "ib" changes nothing in C either
        assertThat(run("-P", "ib", "-P", "tcp").status()).isEqualTo(1);
        assertThat(run("-f", "gid")).isEqualTo(new Result(1, "",
                "ucmatose: -f gid (AF_IB addresses) is not supported: rdma4j's rdma_cm takes IP addresses\n"));
    }

    /** The C server never reads -t: it is accepted there. */
    @Test
    void theServerIgnoresTypeOfService() {
        Parse p = parse("-t", "3", "-c", "2");
        assertThat(p.options().client()).isFalse();
        assertThat(p.options().connections()).isEqualTo(2);
        assertThat(p.err()).isEmpty();
    }

    @Test
    void atoiIsCs() {
        assertThat(CmatoseCommand.atoi("64")).isEqualTo(64);
        assertThat(CmatoseCommand.atoi("  +20x")).isEqualTo(20);
        assertThat(CmatoseCommand.atoi("-3")).isEqualTo(-3);
        assertThat(CmatoseCommand.atoi("0x10")).isZero();
        assertThat(CmatoseCommand.atoi("")).isZero();
        assertThat(CmatoseCommand.atoi("4294967297")).isEqualTo(1);
    }

    @Test
    void getoptOnItsOwn() {
        Getopt.Result r = Getopt.parse("p", "ab:", List.of("-aab", "x", "y", "-b-a", "-a"));
        assertThat(r.error()).isNull();
        assertThat(r.options()).containsExactly(new Getopt.Option('a', null), new Getopt.Option('a', null),
                new Getopt.Option('b', "x"), new Getopt.Option('b', "-a"), new Getopt.Option('a', null));
        assertThat(Getopt.parse("p", "ab:", List.of("-a:")).error()).isEqualTo("p: invalid option -- ':'");
    }

    /** The port is a service as glibc's getaddrinfo reads it (strtoul, then the services database). */
    @Test
    void portsAreServices() throws Exception {
        Path services = Files.writeString(dir.resolve("services"), """
                # comment
                ssh		22/tcp				# SSH Remote Login Protocol
                domain		53/udp
                http		80/tcp		www		# WorldWideWeb HTTP
                """);
        assertThat(AddrInfo.port("7471", services)).isEqualTo(7471);
        assertThat(AddrInfo.port(" +7471", services)).isEqualTo(7471);
        assertThat(AddrInfo.port("70000", services)).isEqualTo(70000 & 0xffff);
        assertThat(AddrInfo.port("4294967296", services)).isZero(); // (int) strtoul
        assertThat(AddrInfo.port("", services)).isZero();
        assertThat(AddrInfo.port("ssh", services)).isEqualTo(22);
        assertThat(AddrInfo.port("www", services)).isEqualTo(80);
        for (String bad : List.of("domain", "abc", "7471 ", "-1", "0x10", "99999999999999999999")) {
            assertThatThrownBy(() -> AddrInfo.port(bad, services)).as(bad)
                    .isInstanceOfSatisfying(AddrInfo.LookupException.class, e -> {
                        assertThat(e.code()).isEqualTo(AddrInfo.EAI_SERVICE);
                        assertThat(e.getMessage()).isEqualTo("Servname not supported for ai_socktype");
                    });
        }
        assertThatThrownBy(() -> AddrInfo.port("ssh", dir.resolve("none")))
                .isInstanceOf(AddrInfo.LookupException.class);
    }

    @Test
    void numericHostsAreParsedAsGetaddrinfoDoes() throws Exception {
        assertThat(AddrInfo.host("198.18.0.1", true)).isEqualTo(InetAddress.getByName("198.18.0.1"));
        assertThat(AddrInfo.host("127.1", true)).isEqualTo(InetAddress.getByName("127.0.0.1"));
        assertThat(AddrInfo.host("0x7f.0.0.1", true)).isEqualTo(InetAddress.getByName("127.0.0.1"));
        assertThat(AddrInfo.host("::1", true)).isEqualTo(InetAddress.getByName("::1"));
        for (String bad : List.of("localhost", "", "1.2.3.4.5")) {
            assertThatThrownBy(() -> AddrInfo.host(bad, true)).as(bad)
                    .isInstanceOfSatisfying(AddrInfo.LookupException.class, e -> {
                        assertThat(e.code()).isEqualTo(AddrInfo.EAI_NONAME);
                        assertThat(e.getMessage()).isEqualTo("Name or service not known");
                    });
        }
        assertThatThrownBy(() -> AddrInfo.host("", false)).isInstanceOf(AddrInfo.LookupException.class);
    }

    /** The JDK names getaddrinfo's error after the host: that is the C tool's line and status. */
    @Test
    void lookupFailuresKeepGetaddrinfosCode() {
        AddrInfo.LookupException again = AddrInfo.failure("h.invalid",
                new UnknownHostException("h.invalid: Temporary failure in name resolution"));
        assertThat(again.code()).isEqualTo(-3);
        assertThat(again.getMessage()).isEqualTo("Temporary failure in name resolution");
        AddrInfo.LookupException bare = AddrInfo.failure("h.invalid", new UnknownHostException("h.invalid"));
        assertThat(bare.code()).isEqualTo(-2);
        assertThat(bare.getMessage()).isEqualTo("Name or service not known");
    }
}
