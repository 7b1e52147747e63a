package dev.rdma4j;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The device the device tests run on: {@code RDMA4J_DEVICE}, else the first one. There is no skip:
 * a device test without a device fails, and scripts/device-tests runs them in the Soft-RoCE guest.
 */
public final class TestDevice {
    private TestDevice() {
    }

    public static Device device() {
        try {
            return Device.byNameOrDefault(null);
        } catch (VerbsException e) {
            throw new AssertionError("device tests need an RDMA device: run them with scripts/device-tests", e);
        }
    }

    /** A sysfs attribute of the device, e.g. {@code sysfs("ports/1/state")}, trimmed. */
    public static String sysfs(String relative) {
        try {
            return Files.readString(Path.of(device().sysfsPath(), relative)).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
