package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Remote access is opt-in per region: with its rkey, a connected peer can write a region only if it was
 * registered with {@link AccessFlag#REMOTE_WRITE} and read it only with {@link AccessFlag#REMOTE_READ}. The
 * queue pairs allow remote read and write (the {@code Loopback} default), so only the region's flags refuse;
 * the peer's request fails with {@code REM_ACCESS_ERR} and the target memory is unchanged.
 */
@Tag("device")
class RemoteAccessDeviceTest {
    private static final int SIZE = 4096;
    private static final byte MARK = 0x5c;
    private static final byte PEER = 0x11;

    @Test
    void regionWithoutRemoteFlagsCannotBeWrittenByThePeer() throws Exception {
        assertWriteRefused(AccessFlag.LOCAL_WRITE);
        assertWriteRefused();
    }

    @Test
    void regionWithoutRemoteFlagsCannotBeReadByThePeer() throws Exception {
        assertReadRefused(AccessFlag.LOCAL_WRITE);
        assertReadRefused();
        assertReadRefused(AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
    }

    @Test
    void remoteReadOnlyRegionCanBeReadButNotWritten() throws Exception {
        // the control: the same set-up with REMOTE_READ reads, so the refusals above are the flags' doing
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion local = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.REMOTE_READ); SendBatch sb = new SendBatch(1, 1)) {
            fill(target, MARK);
            lb.a.post(sb.read(1, local, 0, SIZE, target.remote(), 0));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).isEqualTo(WcStatus.SUCCESS);
            assertFilled(local, MARK);
        }
        assertWriteRefused(AccessFlag.REMOTE_READ);
        assertWriteRefused(AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ);
    }

    @Test
    void closingARegionInvalidatesItsRkey() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                SendBatch sb = new SendBatch(1, 1)) {
            RemoteRegion stale;
            try (MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE)) {
                stale = target.remote();
                lb.a.post(sb.write(9, source, 0, 64, stale, 0));
                assertThat(lb.awaitOne(lb.cqA).status()).as("while registered").isEqualTo(WcStatus.SUCCESS);
            }
            lb.a.post(sb.clear().write(10, source, 0, 64, stale, 0));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).as("the rkey of a closed region").isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(c.wrId()).isEqualTo(10);
        }
    }

    private static void assertWriteRefused(AccessFlag... targetAccess) throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryRegion target = lb.pd.allocate(SIZE, targetAccess); SendBatch sb = new SendBatch(1, 1)) {
            fill(source, PEER);
            fill(target, MARK);
            lb.a.post(sb.write(7, source, 0, SIZE, target.remote(), 0));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).as("RDMA WRITE into a region registered with %s",
                    java.util.Arrays.toString(targetAccess)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(c.wrId()).isEqualTo(7);
            assertFilled(target, MARK);
        }
    }

    private static void assertReadRefused(AccessFlag... targetAccess) throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion local = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryRegion target = lb.pd.allocate(SIZE, targetAccess); SendBatch sb = new SendBatch(1, 1)) {
            fill(local, PEER);
            fill(target, MARK);
            lb.a.post(sb.read(8, local, 0, SIZE, target.remote(), 0));
            WorkCompletion c = lb.awaitOne(lb.cqA);
            assertThat(c.status()).as("RDMA READ of a region registered with %s",
                    java.util.Arrays.toString(targetAccess)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(c.wrId()).isEqualTo(8);
            assertFilled(target, MARK);
            assertFilled(local, PEER); // nothing of the target came back
        }
    }

    private static void fill(MemoryRegion mr, byte value) {
        mr.segment().fill(value);
    }

    private static void assertFilled(MemoryRegion mr, byte value) {
        for (long i = 0; i < mr.length(); i++) {
            byte b = mr.segment().get(ValueLayout.JAVA_BYTE, i);
            if (b != value) {
                throw new AssertionError("byte " + i + " of the region is 0x" + Integer.toHexString(b & 0xff)
                        + ", expected 0x" + Integer.toHexString(value & 0xff));
            }
        }
    }
}
