package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The compiled module: one module, the API packages (and the wire protocol rdma4j-netty shares) exported, the FFM
 * plumbing hidden, no dependencies but the JDK's (its flight recorder, {@code jdk.jfr}, to which alone the events'
 * package is exported).
 */
class ModuleDescriptorTest {

    @Test
    void exportsOnlyTheApi() throws Exception {
        Path classes = Path.of(Rdma.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ModuleDescriptor d = ModuleFinder.of(classes).find("dev.rdma4j").orElseThrow().descriptor();
        assertThat(d.exports()).filteredOn(e -> !e.isQualified()).extracting(ModuleDescriptor.Exports::source)
                .containsExactlyInAnyOrder("dev.rdma4j", "dev.rdma4j.connect", "dev.rdma4j.engine",
                        "dev.rdma4j.net", "dev.rdma4j.net.protocol");
        assertThat(d.exports()).filteredOn(ModuleDescriptor.Exports::isQualified)
                .singleElement().satisfies(e -> {
                    assertThat(e.source()).isEqualTo("dev.rdma4j.internal.jfr");
                    assertThat(e.targets()).containsExactly("jdk.jfr");
                });
        assertThat(d.packages()).contains("dev.rdma4j.internal.ffi");
        assertThat(d.requires()).extracting(ModuleDescriptor.Requires::name)
                .containsExactlyInAnyOrder("java.base", "jdk.jfr");
    }
}
