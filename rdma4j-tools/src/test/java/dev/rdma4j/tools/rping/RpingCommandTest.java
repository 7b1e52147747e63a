package dev.rdma4j.tools.rping;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.tools.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What rping refuses before touching a device, with the C tool's messages and statuses. */
class RpingCommandTest {
    private record Result(int status, String out, String err) {
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] full = new String[args.length + 1];
        full[0] = "rping";
        System.arraycopy(args, 0, full, 1, args.length);
        int status = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(full);
        return new Result(status, out.toString(), err.toString());
    }

    @Test
    void neitherServerNorClientPrintsTheUsage() {
        Result r = run("-a", "127.0.0.1");
        assertThat(r.status()).isEqualTo(22);
        assertThat(r.out()).contains("Usage:").contains("-S size");
    }

    @Test
    void sizeOutOfRange() {
        Result small = run("-s", "-S", "22");
        assertThat(small.status()).isEqualTo(22);
        assertThat(small.err()).isEqualTo("Invalid size 22 (valid range is 23 to 65536)\n");
        Result big = run("-c", "-S65536", "-a", "127.0.0.1");
        assertThat(big.status()).isEqualTo(22);
        assertThat(big.err()).isEqualTo("Invalid size 65536 (valid range is 23 to 65536)\n");
        assertThat(run("-s", "-S", "junk").err()).isEqualTo("Invalid size 0 (valid range is 23 to 65536)\n");
    }

    @Test
    void negativeCount() {
        Result r = run("-c", "-C", "-1", "-a", "127.0.0.1");
        assertThat(r.status()).isEqualTo(22);
        assertThat(r.err()).isEqualTo("Invalid count -1\n");
    }

    @Test
    void unknownOptionsAreInvalid() {
        assertThat(run("-s", "-x").status()).isEqualTo(22);
        assertThat(run("-s", "-t", "5").status()).isEqualTo(22); // in getopt's string, but not handled by rping
    }

    /** {@code -I} is resolved like {@code -a}: an unknown name ends with getaddrinfo's line and 254. */
    @Test
    void anUnresolvableSourceAddressFailsLikeAnUnresolvableAddress() {
        Result r = run("-c", "-I", "no-such-host.invalid", "-a", "127.0.0.1");
        assertThat(r.status()).isEqualTo(254);
        assertThat(r.out()).isEqualTo(
                "getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void bothRolesAreRefused() {
        assertThat(run("-s", "-c").status()).isEqualTo(22);
    }

    @Test
    void atoiIsCs() {
        assertThat(RpingCommand.atoi("64")).isEqualTo(64);
        assertThat(RpingCommand.atoi("  +20x")).isEqualTo(20);
        assertThat(RpingCommand.atoi("-3")).isEqualTo(-3);
        assertThat(RpingCommand.atoi("0x10")).isZero();
        assertThat(RpingCommand.atoi("")).isZero();
        assertThat(RpingCommand.atoi("4294967297")).isEqualTo(1); // (int) strtol
        assertThat(RpingCommand.atoi("99999999999999999999")).isEqualTo(-1); // LONG_MAX as int
    }
}
