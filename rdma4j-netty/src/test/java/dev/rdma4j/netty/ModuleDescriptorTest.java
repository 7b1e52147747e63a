package dev.rdma4j.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.Rdma;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.resolver.AddressResolver;
import io.netty.util.ReferenceCounted;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The compiled module dev.rdma4j.netty: its one package exported, the modules of its API read transitively, and the
 * whole graph resolving on a module path (the tests themselves run on the class path).
 */
class ModuleDescriptorTest {

    @Test
    void exportsTheTransportAndReadsItsApiModulesTransitively() throws Exception {
        ModuleDescriptor d = ModuleFinder.of(location(RdmaChannel.class)).find("dev.rdma4j.netty").orElseThrow()
                .descriptor();
        assertThat(d.exports()).extracting(ModuleDescriptor.Exports::source).containsExactly("dev.rdma4j.netty");
        assertThat(d.exports()).allMatch(e -> !e.isQualified());
        assertThat(d.requires()).filteredOn(r -> !r.name().equals("java.base") && !r.name().equals("jdk.jfr"))
                .allMatch(r -> r.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE))
                .extracting(ModuleDescriptor.Requires::name)
                .containsExactlyInAnyOrder("dev.rdma4j", "io.netty.buffer", "io.netty.common", "io.netty.transport");
        assertThat(d.requires()).filteredOn(r -> r.name().equals("jdk.jfr")).as("the rendezvous event, not API")
                .singleElement().satisfies(r -> assertThat(r.modifiers()).isEmpty());
    }

    @Test
    void resolvesOnAModulePathWithTheCoreAndNetty() throws Exception {
        ModuleFinder path = ModuleFinder.of(Stream.of(RdmaChannel.class, Rdma.class, Channel.class, ByteBuf.class,
                ReferenceCounted.class, AddressResolver.class).map(ModuleDescriptorTest::location).distinct()
                .toArray(Path[]::new));
        Configuration cf = ModuleLayer.boot().configuration().resolve(path, ModuleFinder.of(),
                Set.of("dev.rdma4j.netty"));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getSystemClassLoader());
        Module transport = layer.findModule("dev.rdma4j.netty").orElseThrow();
        Module core = layer.findModule("dev.rdma4j").orElseThrow();
        Module netty = layer.findModule("io.netty.transport").orElseThrow();

        assertThat(transport.canRead(core)).isTrue();
        assertThat(transport.canRead(netty)).isTrue();
        // Netty's bootstraps make channels reflectively (ReflectiveChannelFactory): the package is exported to them.
        assertThat(transport.isExported("dev.rdma4j.netty", netty)).isTrue();
        Class<?> channel = Class.forName("dev.rdma4j.netty.RdmaChannel", false, layer.findLoader("dev.rdma4j.netty"));
        assertThat(channel.getModule()).isSameAs(transport);
        assertThat(channel).isNotSameAs(RdmaChannel.class);
    }

    private static Path location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
