package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A machine without libibverbs, simulated by pointing {@code rdma4j.libibverbs} at a library that does
 * not exist, in a fresh JVM (the library is loaded once per JVM).
 */
class MissingLibraryTest {

    /** Runs in the child JVM. */
    public static final class Probe {
        public static void main(String[] args) {
            System.out.println("available=" + Rdma.isAvailable());
            System.out.println("cause=" + Rdma.unavailabilityCause().getMessage());
            try (Context ctx = Context.open(null)) {
                System.out.println("opened " + ctx);
            } catch (Throwable t) {
                System.out.println("thrown=" + t.getClass().getName() + ": " + t.getMessage());
            }
        }
    }

    @Test
    void creatingAContextNamesTheMissingLibrary() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-Drdma4j.libibverbs=libibverbs-missing-for-test.so.1", "-cp", System.getProperty("java.class.path"),
                Probe.class.getName())).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("available=false")
                .contains("cause=RDMA is unavailable: cannot load libibverbs-missing-for-test.so.1")
                .contains("thrown=dev.rdma4j.RdmaUnavailableException: RDMA is unavailable: cannot load "
                        + "libibverbs-missing-for-test.so.1");
        assertThat(out).doesNotContain("UnsatisfiedLinkError").doesNotContain("ExceptionInInitializerError");
    }
}
