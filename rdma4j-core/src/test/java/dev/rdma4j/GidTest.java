package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GidTest {

    private static Gid hex(String h) {
        return Gid.of(HexFormat.of().parseHex(h));
    }

    @Test
    void formatsLikeGlibcInetNtop() {
        assertThat(hex("00000000000000000000ffffc6120001")).hasToString("::ffff:198.18.0.1");
        assertThat(hex("fe800000000000000250b6fffe123456")).hasToString("fe80::250:b6ff:fe12:3456");
        assertThat(hex("00000000000000000000000000000001")).hasToString("::1");
        assertThat(hex("00000000000000000000000000000000")).hasToString("::");
        assertThat(hex("20010db8000000010000000000000001")).hasToString("2001:db8:0:1::1");
        // A lone zero word is not compressed; of two equal runs the first wins.
        assertThat(hex("20010db8000100010001000100010001")).hasToString("2001:db8:1:1:1:1:1:1");
        assertThat(hex("20010000000000010000000000000001")).hasToString("2001:0:0:1::1");
        assertThat(hex("20010000000000010000000000010001")).hasToString("2001::1:0:0:1:1");
        assertThat(hex("000000000000000000000000c6120001")).hasToString("::198.18.0.1");
    }

    /** 2000 random GIDs, zero-heavy so every compression case occurs, against glibc's inet_ntop. */
    @Test
    void agreesWithGlibcOnRandomAddresses(@TempDir Path dir) throws Exception {
        Random random = new Random(42);
        List<byte[]> gids = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            byte[] raw = new byte[16];
            for (int w = 0; w < 8; w++) {
                int kind = random.nextInt(4);
                int v = kind < 2 ? 0 : kind == 2 ? random.nextInt(16) : random.nextInt(65536);
                raw[2 * w] = (byte) (v >> 8);
                raw[2 * w + 1] = (byte) v;
            }
            if (i % 10 == 0) { // IPv4-mapped and IPv4-compatible shapes
                java.util.Arrays.fill(raw, 0, 10, (byte) 0);
                raw[10] = raw[11] = (byte) (i % 20 == 0 ? 0xff : 0);
            }
            gids.add(raw);
        }
        Path input = dir.resolve("gids.txt");
        Files.write(input, gids.stream().map(HexFormat.of()::formatHex).toList());
        Path src = dir.resolve("ntop.c");
        Files.writeString(src, """
                #include <stdio.h>
                #include <arpa/inet.h>
                int main(int argc, char **argv) {
                  FILE *f = fopen(argv[1], "r"); char line[64]; unsigned char raw[16]; char out[64];
                  while (fgets(line, sizeof line, f)) {
                    for (int i = 0; i < 16; i++) sscanf(line + 2 * i, "%2hhx", &raw[i]);
                    puts(inet_ntop(AF_INET6, raw, out, sizeof out));
                  }
                  return 0;
                }
                """);
        Path exe = dir.resolve("ntop");
        Process cc = new ProcessBuilder("gcc", "-o", exe.toString(), src.toString()).inheritIO().start();
        assertThat(cc.waitFor()).isZero();
        Process run = new ProcessBuilder(exe.toString(), input.toString()).start();
        List<String> expected = new String(run.getInputStream().readAllBytes()).lines().toList();
        assertThat(run.waitFor()).isZero();
        assertThat(gids.stream().map(g -> Gid.of(g).toString()).toList()).containsExactlyElementsOf(expected);
    }

    @Test
    void ipv4MappedRoundTrip() throws Exception {
        Inet4Address a = (Inet4Address) InetAddress.getByName("198.18.0.1");
        Gid g = Gid.ofIpv4(a);
        assertThat(g.isIpv4Mapped()).isTrue();
        assertThat(g.ipv4()).contains(a);
        assertThat(g.toHex()).isEqualTo("00000000000000000000ffffc6120001");
        assertThat(Gid.parseHex(g.toHex())).isEqualTo(g);
        assertThat(g.subnetPrefix()).isZero();
        assertThat(g.interfaceId()).isEqualTo(0x0000ffffc6120001L);
        assertThat(hex("fe800000000000000250b6fffe123456").ipv4()).isEmpty();
        assertThat(g.toRawString()).isEqualTo("0000:0000:0000:0000:0000:ffff:c612:0001");
    }

    @Test
    void rejectsWrongLengths() {
        assertThatThrownBy(() -> Gid.of(new byte[15])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Gid.parseHex("00")).isInstanceOf(IllegalArgumentException.class);
    }
}
