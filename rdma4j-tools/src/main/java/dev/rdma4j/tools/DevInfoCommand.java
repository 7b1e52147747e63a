package dev.rdma4j.tools;

import dev.rdma4j.Context;
import dev.rdma4j.Device;
import dev.rdma4j.DeviceAttributes;
import dev.rdma4j.ExtendedDeviceAttributes;
import dev.rdma4j.VerbsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code rdma4j devinfo}: what {@code ibv_devinfo} prints, through rdma4j. */
@Command(name = "devinfo", mixinStandardHelpOptions = true,
        description = "Print device and port attributes like ibv_devinfo.")
final class DevInfoCommand implements Callable<Integer> {
    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV", description = "use IB device DEV (default all devices)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "PORT", description = "use port PORT (default all ports)")
    int port;

    @Option(names = {"-l", "--list"}, description = "print only the IB devices names")
    boolean list;

    @Option(names = {"-v", "--verbose"}, description = "print all the attributes of the IB device(s)")
    boolean verbose;

    @Override
    public Integer call() throws VerbsException {
        List<Device> devices = Device.list();
        if (list) {
            System.out.printf("%d HCA%s found:%n", devices.size(), devices.size() != 1 ? "s" : "");
            devices.forEach(d -> System.out.printf("\t%s%n", d.name()));
            System.out.println();
            return 0;
        }
        if (device != null) {
            devices = devices.stream().filter(d -> d.name().equals(device)).toList();
            if (devices.isEmpty()) {
                System.err.printf("IB device '%s' wasn't found%n", device);
                return 255;
            }
        } else if (devices.isEmpty()) {
            System.err.println("No IB devices found");
            return 255;
        }
        for (Device d : devices) {
            System.out.print(describe(d, port, verbose));
        }
        System.out.flush();
        return 0;
    }

    /** The ibv_devinfo text for one device (all ports when {@code onlyPort} is 0). */
    static String describe(Device d, int onlyPort, boolean verbose) throws VerbsException {
        try (Context ctx = d.open()) {
            ExtendedDeviceAttributes x = ctx.queryDeviceExtended(); // ibv_devinfo's ibv_query_device_ex
            DeviceAttributes a = x.base();
            if (onlyPort > a.physicalPortCount()) {
                throw new IllegalArgumentException("Invalid port requested for device");
            }
            List<DevInfoFormatter.Port> ports = new ArrayList<>();
            for (int p = 1; p <= a.physicalPortCount(); p++) {
                if (onlyPort == 0 || p == onlyPort) {
                    ports.add(new DevInfoFormatter.Port(p, ctx.queryPort(p), verbose ? ctx.gidTable(p) : List.of()));
                }
            }
            return new DevInfoFormatter().format(d, x, boardId(d), ctx.completionVectorCount(), ports, verbose);
        }
    }

    private static String boardId(Device d) {
        try {
            return Files.readString(Path.of(d.sysfsPath(), "board_id")).trim();
        } catch (IOException e) {
            return null; // rxe and some others have none; ibv_devinfo then prints no line
        }
    }
}
