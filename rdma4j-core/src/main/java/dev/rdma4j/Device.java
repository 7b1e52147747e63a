package dev.rdma4j;

import dev.rdma4j.internal.ffi.DeviceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import java.util.List;

/**
 * An RDMA device as {@code ibv_get_device_list} reports it. A plain value: it holds no native memory
 * (libibverbs invalidates unopened device pointers when the list is freed), so it can be kept freely
 * and {@link #open() opened} at any time.
 *
 * @param name          kernel device name ({@code ibv_get_device_name}), e.g. {@code "rxe0"}
 * @param guid          node GUID in host order ({@code ibv_get_device_guid})
 * @param nodeType      {@code ibv_device.node_type}
 * @param transportType {@code ibv_device.transport_type}
 * @param sysfsPath     {@code ibv_device.ibdev_path}, the device's directory in sysfs
 */
public record Device(String name, long guid, NodeType nodeType, TransportType transportType, String sysfsPath) {

    /** Environment variable that selects the device tools and tests use ({@link #byNameOrDefault}). */
    public static final String DEVICE_ENV = "RDMA4J_DEVICE";

    /**
     * Lists the RDMA devices of this machine ({@code ibv_get_device_list}, then {@code ibv_free_device_list}).
     *
     * @return the devices, possibly none
     * @throws VerbsException if the kernel lacks verbs support altogether ({@code ENOSYS})
     * @throws RdmaUnavailableException if libibverbs cannot be loaded
     */
    public static List<Device> list() throws VerbsException {
        Rdma.ensureAvailable();
        try {
            return DeviceVerbs.listDevices().stream().map(Device::of).toList();
        } catch (NativeException e) {
            throw VerbsException.from(e);
        }
    }

    /**
     * The device named {@code name}, or when {@code name} is null the one named by {@code RDMA4J_DEVICE},
     * or else the first device.
     *
     * @param name a device name, or {@code null} for the default
     * @return the device
     * @throws VerbsException with {@code ENODEV} if there is no such device (or none at all)
     */
    public static Device byNameOrDefault(String name) throws VerbsException {
        String wanted = name != null ? name : System.getenv(DEVICE_ENV);
        List<Device> devices = list();
        for (Device d : devices) {
            if (wanted == null || wanted.isEmpty() || d.name.equals(wanted)) {
                return d;
            }
        }
        throw new VerbsException("ibv_get_device_list", dev.rdma4j.internal.ffi.CConstants.ENODEV, "No such device",
                wanted == null ? "no RDMA device on this machine" : "no RDMA device named " + wanted
                        + " (found " + devices.stream().map(Device::name).toList() + ")");
    }

    /**
     * Opens the device ({@code ibv_open_device}).
     *
     * @return a new context; close it when done
     * @throws VerbsException if the device is gone or cannot be opened
     */
    public Context open() throws VerbsException {
        return Context.open(name);
    }

    /**
     * The GUID formatted as {@code ibv_devinfo} prints it.
     *
     * @return e.g. {@code "5054:00ff:fe12:3456"}
     */
    public String guidString() {
        return DeviceAttributes.guidString(guid);
    }

    /** The device the bindings described. */
    static Device of(dev.rdma4j.internal.ffi.DeviceVerbs.DeviceInfo d) {
        return new Device(d.name(), d.guid(), NodeType.of(d.nodeType()), TransportType.of(d.transportType()),
                d.sysfsPath());
    }
}
