package dev.rdma4j.twohost;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.AccessFlag;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.MemoryWindow;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.WcStatus;
import dev.rdma4j.WorkCompletion;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A memory window across the wire (issue 32, item 3): host 1 lends host 2 a window on a range of a region that is
 * not itself open to remote access, host 2 writes and reads through it, host 1 invalidates it, and host 2's next
 * write fails with {@code REM_ACCESS_ERR}, the region untouched by it. The window's address, length and key go
 * over the control channel.
 */
@Tag("two-host")
class TwoHostWindowTest {
    private static final byte MARK = 0x5c;
    private static final byte PEER = 0x11;
    private static final byte LATE = 0x77;
    private static final Duration WITHIN = Duration.ofSeconds(60);

    @Test
    void aWindowLentAcrossTheWireWorksUntilItsOwnerInvalidatesIt() throws Exception {
        int port = 21000;
        try (TwoHost.Control ctl = TwoHost.Control.open(port);
                RcPair p = new RcPair(port + 1, 16, 8192, 14, 7, 7, 12); SendBatch sb = new SendBatch(1, 1)) {
            if (TwoHost.isServer()) {
                try (MemoryRegion lent = p.pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.MW_BIND);
                        MemoryWindow window = p.pd.allocateWindow(MemoryWindow.Type.TYPE_2)) {
                    lent.segment().fill(MARK);
                    p.qp.post(sb.bindWindow(1, window, lent, 1024, 1024, AccessFlag.REMOTE_WRITE,
                            AccessFlag.REMOTE_READ));
                    assertThat(p.awaitAll(1, WITHIN).get(0).status()).as("the bind").isEqualTo(WcStatus.SUCCESS);
                    RemoteRegion w = window.remote();
                    ctl.send(w.address() + " " + w.length() + " " + w.rkey());
                    ctl.barrier("written");
                    assertBytes(lent, 1024, 64, PEER);
                    assertBytes(lent, 0, 1024, MARK);
                    assertBytes(lent, 1088, 4096 - 1088, MARK);
                    p.qp.post(sb.clear().localInvalidate(2, window));
                    assertThat(p.awaitAll(1, WITHIN).get(0).status()).as("the invalidate").isEqualTo(WcStatus.SUCCESS);
                    ctl.barrier("invalidated");
                    ctl.barrier("refused"); // the QP stays up until the peer has seen the refusal
                    assertBytes(lent, 1024, 64, PEER);
                    assertBytes(lent, 1088, 4096 - 1088, MARK);
                }
            } else {
                String[] f = ctl.receive().split(" ");
                RemoteRegion w = new RemoteRegion(Long.parseLong(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2]));
                MemoryRegion mine = p.region;
                mine.segment().asSlice(0, 64).fill(PEER);
                p.qp.post(sb.write(3, mine, 0, 64, w, 0));
                assertThat(p.awaitAll(1, WITHIN).get(0).status()).as("a write through the lent window")
                        .isEqualTo(WcStatus.SUCCESS);
                p.qp.post(sb.clear().read(4, mine, 1024, 128, w, 0));
                assertThat(p.awaitAll(1, WITHIN).get(0).status()).isEqualTo(WcStatus.SUCCESS);
                assertBytes(mine, 1024, 64, PEER);
                assertBytes(mine, 1088, 64, MARK);
                ctl.barrier("written");
                ctl.barrier("invalidated");
                mine.segment().asSlice(0, 64).fill(LATE);
                p.qp.post(sb.clear().write(5, mine, 0, 64, w, 0));
                WorkCompletion refused = p.awaitAll(1, WITHIN).get(0);
                assertThat(refused.status()).as("a write with the invalidated key").isEqualTo(WcStatus.REM_ACCESS_ERR);
                ctl.barrier("refused");
            }
        }
    }

    private static void assertBytes(MemoryRegion mr, long from, long length, byte value) {
        for (long i = from; i < from + length; i++) {
            byte b = mr.segment().get(JAVA_BYTE, i);
            if (b != value) {
                throw new AssertionError("byte " + i + " is 0x" + Integer.toHexString(b & 0xff) + ", expected 0x"
                        + Integer.toHexString(value & 0xff));
            }
        }
    }
}
