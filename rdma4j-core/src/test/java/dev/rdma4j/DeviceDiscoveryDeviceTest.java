package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Device discovery against what the kernel publishes in sysfs. */
@Tag("device")
class DeviceDiscoveryDeviceTest {

    @Test
    void listsTheDeviceWithTheKernelsGuidAndType() throws Exception {
        Device d = TestDevice.device();
        assertThat(Device.list()).contains(d);
        assertThat(Rdma.isAvailable()).isTrue();
        assertThat(Rdma.unavailabilityCause()).isNull();
        assertThat(Path.of(d.sysfsPath())).isDirectory();
        assertThat(Path.of(d.sysfsPath()).getFileName().toString()).isEqualTo(d.name());
        assertThat(d.guidString()).isEqualTo(TestDevice.sysfs("node_guid"));
        int nodeType = Integer.parseInt(TestDevice.sysfs("node_type").split(":")[0]);
        assertThat(d.nodeType().code()).isEqualTo(nodeType);
        assertThat(d.nodeType()).isEqualTo(NodeType.CA);
        assertThat(d.transportType()).isEqualTo(TransportType.IB);
        long uverbs = Files.list(Path.of("/sys/class/infiniband_verbs")).filter(p -> p.getFileName().toString()
                .startsWith("uverbs")).count();
        assertThat(Device.list()).hasSize((int) uverbs);
    }

    @Test
    void unknownDeviceIsAVerbsExceptionWithErrno() {
        assertThatThrownBy(() -> Context.open("no-such-rdma-device"))
                .isInstanceOfSatisfying(VerbsException.class, e -> {
                    assertThat(e.errno()).isEqualTo(19);
                    assertThat(e.errnoText()).isEqualTo("No such device");
                    assertThat(e.getMessage()).contains("no-such-rdma-device");
                });
    }
}
