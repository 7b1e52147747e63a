package dev.rdma4j.tools.datagram;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.tools.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** The options udaddy and mckey refuse before touching a device, and mckey's {@code inet_ntop}. */
class DatagramCommandTest {
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
    void optionsRdma4jCannotHonourAreRefusedWithAMessage() {
        assertThat(run("udaddy", "-t", "4")).extracting(Result::status, Result::err)
                .containsExactly(1, "rdma4j udaddy: -t (RDMA_OPTION_ID_TOS) is not supported\n");
        assertThat(run("udaddy", "-f", "gid").err()).contains("AF_IB");
        assertThat(run("udaddy", "-P", "ipoib").err()).contains("-P ipoib");
        assertThat(run("udaddy", "-p", "0x2").err()).contains("only the UDP port space");
        assertThat(run("mckey", "-m", "239.1.1.1", "-l").err()).contains("BLOCK_SELF_MCAST_LB");
        assertThat(run("mckey", "-M", "ff0e::1", "-b", "::1").err()).contains("AF_IB");
        assertThat(run("mckey", "-s").err()).contains("-m multicast_address is required");
        assertThat(run("mckey", "-m", "239.1.1.1", "-p", "0x106").status()).isEqualTo(1);
        assertThat(run("mckey", "-x").status()).isEqualTo(1); // an unknown option, as getopt's usage exit
    }

    @Test
    void ntopWritesGidsAsInetNtopDoes() throws Exception {
        assertThat(MckeyCommand.ntop(InetAddress.getByName("::ffff:239.1.2.3").getAddress().length == 4
                ? mapped(239, 1, 2, 3) : null)).isEqualTo("::ffff:239.1.2.3");
        assertThat(MckeyCommand.ntop(InetAddress.getByName("ff0e::1").getAddress())).isEqualTo("ff0e::1");
        assertThat(MckeyCommand.ntop(InetAddress.getByName("ff12:0:0:1:0:0:0:2").getAddress()))
                .isEqualTo("ff12:0:0:1::2");
        assertThat(MckeyCommand.ntop(InetAddress.getByName("ff12:1:0:0:2:3:4:5").getAddress()))
                .isEqualTo("ff12:1::2:3:4:5");
        assertThat(MckeyCommand.ntop(InetAddress.getByName("ff12:1:2:3:4:5:6:0").getAddress()))
                .isEqualTo("ff12:1:2:3:4:5:6:0");
        assertThat(MckeyCommand.ntop(new byte[16])).isEqualTo("::");
        assertThat(MckeyCommand.ntop(InetAddress.getByName("fe80::").getAddress())).isEqualTo("fe80::");
    }

    private static byte[] mapped(int a, int b, int c, int d) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        g[12] = (byte) a;
        g[13] = (byte) b;
        g[14] = (byte) c;
        g[15] = (byte) d;
        return g;
    }
}
