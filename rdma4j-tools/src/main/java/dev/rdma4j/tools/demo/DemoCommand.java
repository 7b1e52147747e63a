package dev.rdma4j.tools.demo;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.DeviceAttributes;
import dev.rdma4j.GidEntry;
import dev.rdma4j.PortAttributes;
import dev.rdma4j.Rdma;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code rdma4j demo}: a short narrated tour of what rdma4j does, on a real device. */
@Command(name = "demo", mixinStandardHelpOptions = true, description = "A narrated tour of rdma4j on a real device.")
public final class DemoCommand implements Callable<Integer> {
    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV", description = "device (default: $RDMA4J_DEVICE or the first)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "PORT", defaultValue = "1", description = "port (default 1)")
    int port;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        step("1. Is RDMA available?", "Rdma.isAvailable() -> " + Rdma.isAvailable() + " (" + Rdma.libraryName()
                + " loaded through the Foreign Function & Memory API, no JNI)");
        List<Device> devices = Device.list();
        step("2. Devices (ibv_get_device_list)", devices.isEmpty() ? "none" : "");
        for (Device d : devices) {
            out.printf("   %-8s node GUID %s, node type %s, transport %s%n", d.name(), d.guidString(), d.nodeType(),
                    d.transportType());
        }
        if (devices.isEmpty()) {
            out.println("   no RDMA device: run bin/rdma4j demo without a device to use the Soft-RoCE guest");
            return 1;
        }
        try (Context ctx = Context.open(device)) {
            DeviceAttributes a = ctx.queryDevice();
            step("3. Opened " + ctx.device().name() + " (ibv_open_device) and queried it (ibv_query_device)", "");
            out.printf("   firmware %s, vendor 0x%04x part %d, %d port(s)%n", a.firmwareVersion(), a.vendorId(),
                    a.vendorPartId(), a.physicalPortCount());
            out.printf("   up to %d QPs of %d work requests and %d SGEs, %d CQs of %d entries, %d SRQs%n", a.maxQp(),
                    a.maxQpWr(), a.maxSge(), a.maxCq(), a.maxCqe(), a.maxSrq());
            out.printf("   regions up to %d bytes, atomics: %s%n", a.maxMrSize(), a.atomicCapability());

            PortAttributes p = ctx.queryPort(port);
            step("4. Port " + port + " (ibv_query_port)", "");
            out.printf("   state %s, active MTU %d (max %d), link layer %s, LID %d%n", p.state(), p.activeMtu().bytes(),
                    p.maxMtu().bytes(), p.linkLayer(), p.lid());

            step("5. GID table (ibv_query_gid_ex)", "");
            for (GidEntry g : ctx.gidTable(port)) {
                out.printf("   GID %d: %-28s %s%s%n", g.index(), g.gid(), g.type(),
                        g.gid().ipv4().map(ip -> "  (IPv4 " + ip.getHostAddress() + ")").orElse(""));
            }
            GidEntry best = ctx.bestRoceGid(port);
            step("6. The GID to use for RoCE (RoCE v2, IPv4-mapped first, as perftest picks)",
                    "index " + best.index() + " = " + best.gid() + " (" + best.type() + ")");

            if (!new DataPathTour(ctx, port, out).run()) {
                return 1;
            }
            java.util.Optional<java.net.Inet4Address> ip = best.gid().ipv4();
            if (ip.isEmpty()) {
                out.println("   (no IPv4 address on this port: the rdma_cm and gRPC parts need one)");
            } else if (!new AsyncTour(ip.get(), out).run() || !new GrpcTour(ip.get(), out).run()) {
                return 1;
            }
            if (!new SrqTour(ctx, out).run()) {
                return 1;
            }
            if (!new ModernTour(ctx, ip.orElse(null), out).run()) {
                return 1;
            }
        }
        step("Done", "every handle closed; closing twice is harmless, using a closed one throws IllegalStateException");
        return 0;
    }

    private void step(String title, String detail) {
        out.println();
        out.println("== " + title);
        if (!detail.isEmpty()) {
            out.println("   " + detail);
        }
    }
}
