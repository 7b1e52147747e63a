package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Device, port and GID queries on the real device, checked against sysfs. */
@Tag("device")
class ContextDeviceTest {

    @Test
    void queryDeviceMatchesSysfs() throws Exception {
        Device d = TestDevice.device();
        try (Context ctx = d.open()) {
            DeviceAttributes a = ctx.queryDevice();
            assertThat(DeviceAttributes.guidString(a.nodeGuid())).isEqualTo(TestDevice.sysfs("node_guid"));
            assertThat(DeviceAttributes.guidString(a.systemImageGuid())).isEqualTo(TestDevice.sysfs("sys_image_guid"));
            // sysfs fw_ver is the driver's string; rxe leaves it empty and the provider then formats the
            // kernel's numeric firmware version as "major.minor.sub".
            String fw = TestDevice.sysfs("fw_ver");
            if (fw.isEmpty()) {
                assertThat(a.firmwareVersion()).matches("\\d+\\.\\d+\\.\\d+");
            } else {
                assertThat(a.firmwareVersion()).isEqualTo(fw);
            }
            long ports;
            try (var s = Files.list(Path.of(d.sysfsPath(), "ports"))) {
                ports = s.count();
            }
            assertThat(a.physicalPortCount()).isEqualTo((int) ports);
            assertThat(a.maxQp()).isPositive();
            assertThat(a.maxQpWr()).isPositive();
            assertThat(a.maxCqe()).isPositive();
            assertThat(a.maxSge()).isPositive();
            assertThat(Long.compareUnsigned(a.maxMrSize(), 1L << 20)).isPositive(); // u64: rxe says ~0
            assertThat(a.maxSrq()).isPositive();
            assertThat(a.maxSrqWr()).isPositive();
            assertThat(a.atomicCapability()).isNotEqualTo(AtomicCapability.UNKNOWN);
            assertThat(ctx.completionVectorCount()).isPositive();
        }
    }

    @Test
    void queryPortMatchesSysfs() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            PortAttributes p = ctx.queryPort(1);
            String state = TestDevice.sysfs("ports/1/state"); // e.g. "4: ACTIVE"
            assertThat(p.state().code()).isEqualTo(Integer.parseInt(state.split(":")[0]));
            assertThat(p.state()).isEqualTo(PortState.ACTIVE);
            String linkLayer = TestDevice.sysfs("ports/1/link_layer");
            assertThat(p.linkLayer()).isEqualTo(linkLayer.equals("Ethernet") ? LinkLayer.ETHERNET : LinkLayer.INFINIBAND);
            assertThat(p.lid()).isEqualTo(Integer.decode(TestDevice.sysfs("ports/1/lid")));
            assertThat(p.activeMtu()).isNotEqualTo(Mtu.UNKNOWN);
            assertThat(p.activeMtu().code()).isLessThanOrEqualTo(p.maxMtu().code());
            long gids;
            try (var s = Files.list(Path.of(TestDevice.device().sysfsPath(), "ports", "1", "gids"))) {
                gids = s.count();
            }
            assertThat(p.gidTableLength()).isEqualTo((int) gids);
        }
    }

    @Test
    void gidTableMatchesSysfsAndRoceV2Ipv4IsPreferred() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            List<GidEntry> table = ctx.gidTable(1);
            assertThat(table).isNotEmpty();
            for (GidEntry e : table) {
                String sysfsGid = TestDevice.sysfs("ports/1/gids/" + e.index()).replace(":", "");
                assertThat(e.gid().toHex()).isEqualTo(sysfsGid);
                String type = TestDevice.sysfs("ports/1/gid_attrs/types/" + e.index());
                assertThat(e.type()).isEqualTo(type.equals("RoCE v2") ? GidType.ROCE_V2 : GidType.ROCE_V1);
                assertThat(ctx.queryGid(1, e.index())).isEqualTo(e);
            }
            // the table (one ibv_query_gid_table call) holds exactly the entries that per-index queries find
            List<GidEntry> perIndex = new java.util.ArrayList<>();
            for (int i = 0; i < ctx.queryPort(1).gidTableLength(); i++) {
                try {
                    perIndex.add(ctx.queryGid(1, i));
                } catch (VerbsException empty) {
                    assertThat(empty.errno()).as("index %d", i).isIn(61, 22);
                }
            }
            assertThat(table).containsExactlyElementsOf(perIndex);
            GidEntry best = ctx.bestRoceGid(1);
            assertThat(best.type()).isEqualTo(GidType.ROCE_V2);
            assertThat(best.gid().isIpv4Mapped()).isTrue();
            String guestAddr = System.getenv("RDMA4J_GUEST_ADDR");
            if (guestAddr != null) { // in the Soft-RoCE guest: GID 1 is the netdev's IPv4 address
                assertThat(best.index()).isEqualTo(1);
                assertThat(best.gid().toString()).isEqualTo("::ffff:" + guestAddr);
                assertThat(best.gid().ipv4().orElseThrow().getHostAddress()).isEqualTo(guestAddr);
            }
        }
    }

    @Test
    void errorsNameTheVerbAndErrno() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            assertThatThrownBy(() -> ctx.queryPort(42)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.verb()).isEqualTo("ibv_query_port");
                assertThat(e.errno()).isEqualTo(22);
                assertThat(e.getMessage()).isEqualTo("ibv_query_port failed: errno 22 (Invalid argument): port 42");
            });
            assertThatThrownBy(() -> ctx.queryGid(1, 100_000)).isInstanceOf(VerbsException.class)
                    .hasMessageStartingWith("ibv_query_gid");
            assertThatThrownBy(() -> ctx.queryPort(0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void closeIsIdempotentAndUseAfterCloseThrows() throws Exception {
        Context ctx = TestDevice.device().open();
        ctx.close();
        ctx.close();
        assertThat(ctx.isClosed()).isTrue();
        assertThatThrownBy(ctx::queryDevice).isInstanceOf(IllegalStateException.class)
                .hasMessage("Context(" + TestDevice.device().name() + ") is closed");
        assertThatThrownBy(() -> ctx.queryPort(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(ctx::completionVectorCount).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void manyContextsOpenAndCloseIndependently() throws Exception {
        Context a = TestDevice.device().open();
        Context b = TestDevice.device().open();
        a.close();
        assertThat(b.queryPort(1).state()).isEqualTo(PortState.ACTIVE);
        b.close();
    }
}
