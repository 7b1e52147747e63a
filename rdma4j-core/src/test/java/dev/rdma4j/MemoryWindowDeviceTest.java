package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Memory windows on the device ({@code ibv_alloc_mw}, bind by work request and by {@code ibv_bind_mw}, local
 * invalidate, send with invalidate): a peer reaches the window's range of a region that is not itself open to remote
 * access, nothing outside the range, and nothing once the window is invalidated or bound again.
 */
@Tag("device")
class MemoryWindowDeviceTest {
    private static final int SIZE = 4096;
    private static final byte MARK = 0x5c;
    private static final byte PEER = 0x11;

    @Test
    void type2WindowLetsThePeerReachItsRangeUntilItIsInvalidated() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            source.segment().fill(PEER);
            int before = window.rkey();
            lb.a.post(sb.bindWindow(1, window, target, 1024, 1024, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ));
            WorkCompletion bound = lb.awaitOne(lb.cqA);
            assertThat(bound.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(bound.opcode()).isEqualTo(WcOpcode.BIND_MW);
            assertThat(bound.wrId()).isEqualTo(1);

            RemoteRegion w = window.remote();
            assertThat(w.address()).isEqualTo(target.address() + 1024);
            assertThat(w.length()).isEqualTo(1024);
            assertThat(w.rkey()).isEqualTo(window.rkey()).isEqualTo(MemoryWindow.nextRkey(before))
                    .isNotEqualTo(target.rkey());

            lb.b.post(sb.clear().write(2, source, 0, 64, w, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("the peer's write through the window").isEqualTo(WcStatus.SUCCESS);
            assertBytes(target, 0, 1024, MARK);
            assertBytes(target, 1024, 64, PEER);
            assertBytes(target, 1088, SIZE - 1088, MARK);
            source.segment().fill((byte) 0);
            lb.b.post(sb.clear().read(3, source, 0, 128, w, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("the peer's read through the window").isEqualTo(WcStatus.SUCCESS);
            assertBytes(source, 0, 64, PEER);
            assertBytes(source, 64, 64, MARK);

            lb.a.post(sb.clear().localInvalidate(4, window));
            WorkCompletion invalidated = lb.awaitOne(lb.cqA);
            assertThat(invalidated.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(invalidated.opcode()).isEqualTo(WcOpcode.LOCAL_INV);

            source.segment().fill((byte) 0x77);
            lb.b.post(sb.clear().write(5, source, 0, 64, w, 0));
            WorkCompletion refused = lb.awaitOne(lb.cqB);
            assertThat(refused.status()).as("a write with the invalidated key").isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertBytes(target, 1024, 64, PEER);
        }
    }

    /**
     * The verbs confine a peer to the window's range (C10-75 and the responder's checks); rxe (Linux 6.12) does not:
     * its responder checks the window's key, state and access, then the range of the region under it
     * ({@code check_rkey}: {@code mr_check_range(mr, ...)}), so through a window a peer reaches the whole region with
     * the window's access. Pinned down here, so that the documentation's warning stays true: on rxe this write lands;
     * on a device that keeps to the verbs it fails.
     */
    @Test
    void aWriteStraddlingTheWindowsStartFailsExceptOnRxeWhichChecksOnlyTheRegion() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            source.segment().fill(PEER);
            lb.a.post(sb.bindWindow(1, window, target, 1024, 1024, AccessFlag.REMOTE_WRITE));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            RemoteRegion w = window.remote();
            RemoteRegion before = new RemoteRegion(w.address() - 64, 128, w.rkey()); // straddles the window's start
            lb.b.post(sb.clear().write(2, source, 0, 128, before, 0));
            WorkCompletion c = lb.awaitOne(lb.cqB);
            if (lb.ctx.device().name().startsWith("rxe")) {
                assertThat(c.status()).as("rxe's responder does not check the window's range (if it now does, update"
                        + " MemoryWindow's Javadoc and docs/RELIABILITY.md)").isEqualTo(WcStatus.SUCCESS);
                assertBytes(target, 1024 - 64, 128, PEER);
                assertBytes(target, 0, 1024 - 64, MARK);
            } else {
                assertThat(c.status()).as("a write that starts before the window").isEqualTo(WcStatus.REM_ACCESS_ERR);
                assertBytes(target, 0, SIZE, MARK);
            }
        }
    }

    @Test
    void theRegionItselfStaysClosedToThePeer() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            source.segment().fill(PEER);
            lb.a.post(sb.bindWindow(1, window, target, 0, SIZE, AccessFlag.REMOTE_WRITE));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            lb.b.post(sb.clear().write(2, source, 0, 64, target.remote(), 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("a write with the region's own rkey")
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertBytes(target, 0, SIZE, MARK);
        }
    }

    @Test
    void boundAgainTheWindowHasANewKeyAndTheOldOneReachesNothing() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            source.segment().fill(PEER);
            lb.a.post(sb.bindWindow(1, window, target, 0, 512, AccessFlag.REMOTE_WRITE));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            RemoteRegion first = window.remote();
            lb.a.post(sb.clear().localInvalidate(2, window));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            lb.a.post(sb.clear().bindWindow(3, window, target, 2048, 512, AccessFlag.REMOTE_WRITE));
            assertThat(lb.awaitOne(lb.cqA).status()).as("the second bind").isEqualTo(WcStatus.SUCCESS);
            RemoteRegion second = window.remote();
            assertThat(second.rkey()).isNotEqualTo(first.rkey());
            assertThat(second.rkey() & 0xffffff00).as("the window's index part").isEqualTo(first.rkey() & 0xffffff00);
            assertThat(second.address()).isEqualTo(target.address() + 2048);

            lb.b.post(sb.clear().write(4, source, 0, 64, second, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).isEqualTo(WcStatus.SUCCESS);
            assertBytes(target, 2048, 64, PEER);
            lb.b.post(sb.clear().write(5, source, 0, 64, new RemoteRegion(second.address(), 64, first.rkey()), 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("the first bind's key on the second range")
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertBytes(target, 0, 2048, MARK);
        }
    }

    @Test
    void aZeroBasedWindowIsAddressedFromZero() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            source.segment().fill(PEER);
            lb.a.post(sb.bindWindow(1, window, target, 3072, 1024, AccessFlag.REMOTE_WRITE, AccessFlag.ZERO_BASED));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            RemoteRegion w = window.remote();
            assertThat(w.address()).isZero();
            lb.b.post(sb.clear().write(2, source, 0, 32, w, 100));
            assertThat(lb.awaitOne(lb.cqB).status()).isEqualTo(WcStatus.SUCCESS);
            assertBytes(target, 3072 + 100, 32, PEER);
            assertBytes(target, 0, 3072 + 100, MARK);
        }
    }

    @Test
    void aSendWithInvalidateTakesThePeersWindowBack() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion source = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryRegion inbox = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2); SendBatch sb = new SendBatch(1, 1);
                ReceiveBatch rb = new ReceiveBatch(1, 1)) {
            source.segment().fill(PEER);
            lb.a.post(sb.bindWindow(1, window, target, 0, 1024, AccessFlag.REMOTE_WRITE));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            RemoteRegion w = window.remote();
            lb.a.post(rb.receive(2, inbox, 0, SIZE));
            lb.b.post(sb.clear().write(3, source, 0, 64, w, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).isEqualTo(WcStatus.SUCCESS);
            lb.b.post(sb.clear().sendWithInvalidate(4, source, 0, 16, w));
            assertThat(lb.awaitOne(lb.cqB).status()).as("the send with invalidate").isEqualTo(WcStatus.SUCCESS);
            WorkCompletion received = lb.awaitOne(lb.cqA);
            assertThat(received.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(received.wrId()).isEqualTo(2);
            // verbs.h says IBV_WC_WITH_INV (1 << 3) and the key in invalidated_rkey; rxe copies the kernel's completion
            // to user space as it is, whose IB_WC_WITH_INVALIDATE is 1 << 2 (verbs.h's IBV_WC_IP_CSUM_OK): the key is
            // in its place either way
            if ((received.flags() & WorkCompletions.FLAG_WITH_INV) != 0) {
                assertThat(received.invalidatedRkey()).isEqualTo(w.rkey());
            } else {
                assertThat(received.flags() & 1 << 2).as("rxe's flag for an invalidation").isNotZero();
                assertThat(Integer.reverseBytes(received.immediateData())).isEqualTo(w.rkey());
            }
            assertThat(received.byteLength()).isEqualTo(16);

            lb.b.post(sb.clear().write(5, source, 0, 64, w, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("a write after the peer gave the window back")
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void type1WindowIsBoundByTheVerbAndRebindingRetiresTheOldKey() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion local = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_1); SendBatch sb = new SendBatch(1, 1)) {
            target.segment().fill(MARK);
            window.bind(lb.a, 6, target, 0, 512, AccessFlag.REMOTE_READ);
            WorkCompletion bound = lb.awaitOne(lb.cqA);
            assertThat(bound.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(bound.opcode()).isEqualTo(WcOpcode.BIND_MW);
            assertThat(bound.wrId()).isEqualTo(6);
            RemoteRegion first = window.remote();
            assertThat(first.rkey()).isEqualTo(window.rkey());

            lb.b.post(sb.read(7, local, 0, 512, first, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("a read through the type 1 window").isEqualTo(WcStatus.SUCCESS);
            assertBytes(local, 0, 512, MARK);

            window.bind(lb.a, 8, target, 512, 512, AccessFlag.REMOTE_READ);
            assertThat(lb.awaitOne(lb.cqA).status()).as("the rebind").isEqualTo(WcStatus.SUCCESS);
            RemoteRegion second = window.remote();
            assertThat(second.rkey()).isEqualTo(MemoryWindow.nextRkey(first.rkey()));
            lb.b.post(sb.clear().read(9, local, 0, 64, first, 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("a read with the key of the first bind")
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void misusesAreRefusedBeforeAnythingIsPosted() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion plain = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryRegion readOnly = lb.pd.allocate(SIZE, AccessFlag.MW_BIND);
                ProtectionDomain otherPd = lb.ctx.allocateProtectionDomain();
                MemoryRegion foreign = otherPd.allocate(SIZE, AccessFlag.LOCAL_WRITE, AccessFlag.MW_BIND);
                MemoryWindow type2 = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2);
                MemoryWindow type1 = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_1); SendBatch sb = new SendBatch(1, 1)) {
            assertThatThrownBy(() -> sb.bindWindow(1, type2, plain, 0, 64, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MW_BIND");
            assertThatThrownBy(() -> sb.bindWindow(1, type2, foreign, 0, 64, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("protection domain");
            assertThatThrownBy(() -> sb.bindWindow(1, type2, readOnly, 0, 64, AccessFlag.REMOTE_WRITE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOCAL_WRITE");
            assertThatThrownBy(() -> sb.bindWindow(1, type2, readOnly, SIZE - 8, 64, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> sb.bindWindow(1, type2, readOnly, 0, 0, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> sb.bindWindow(1, type2, readOnly, 0, 64, AccessFlag.LOCAL_WRITE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grants");
            assertThatThrownBy(() -> sb.bindWindow(1, type1, readOnly, 0, 64, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MemoryWindow.bind");
            assertThatThrownBy(() -> type2.bind(lb.a, 1, readOnly, 0, 64, AccessFlag.REMOTE_READ))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SendBatch.bindWindow");
            assertThatThrownBy(() -> type1.bind(lb.a, 1, readOnly, 0, 64, AccessFlag.REMOTE_READ,
                    AccessFlag.ZERO_BASED)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("zero-based");
            assertThat(sb.count()).as("no request was left in the batch").isZero();
            assertThatThrownBy(type2::remote).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("never bound");
        }
    }

    /**
     * rxe (Linux 6.12) takes a local invalidate of a type 2 window in its free state (never bound, or invalidated
     * already) for one of a bound window and dereferences the queue pair it does not have: the guest's kernel oopsed
     * in {@code rxe_invalidate_mw} under the misuse fuzzer (CI, 2026-11-29). Each misuse below crashed the host before
     * rdma4j refused it.
     */
    @Test
    void anInvalidateOfAWindowNotBoundOnTheQueuePairIsRefusedBeforeItIsPosted() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE,
                AccessFlag.MW_BIND); MemoryRegion local = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE);
                MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2);
                MemoryWindow type1 = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_1); SendBatch sb = new SendBatch(2, 1)) {
            target.segment().fill(MARK);
            assertThatThrownBy(() -> lb.a.post(sb.clear().localInvalidate(1, window)))
                    .as("never bound").isInstanceOf(VerbsException.class)
                    .hasMessageContaining("not bound on this queue pair");
            assertThat(sb.failedIndex()).isZero();
            assertThat(lb.a.tryPost(sb)).isEqualTo(22);

            lb.a.post(sb.clear().bindWindow(2, window, target, 0, 64, AccessFlag.REMOTE_READ));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            assertThatThrownBy(() -> lb.b.post(sb.clear().localInvalidate(3, window)))
                    .as("on another queue pair than the bind's").isInstanceOf(VerbsException.class)
                    .hasMessageContaining("not bound on this queue pair");
            lb.a.post(sb.clear().localInvalidate(4, window));
            WorkCompletion invalidated = lb.awaitOne(lb.cqA);
            assertThat(invalidated.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(invalidated.opcode()).isEqualTo(WcOpcode.LOCAL_INV);
            assertThatThrownBy(() -> lb.a.post(sb.clear().localInvalidate(5, window)))
                    .as("invalidated already").isInstanceOf(VerbsException.class)
                    .hasMessageContaining("not bound on this queue pair");

            lb.a.post(sb.clear().bindWindow(6, window, target, 0, 64, AccessFlag.REMOTE_READ).localInvalidate(7, window));
            assertThat(lb.await(lb.cqA, 2)).as("a bind and its invalidate in one batch")
                    .allSatisfy(w -> assertThat(w.status()).isEqualTo(WcStatus.SUCCESS));
            lb.a.post(sb.clear().bindWindow(8, window, target, 0, 64, AccessFlag.REMOTE_READ));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            assertThatThrownBy(() -> lb.a.post(sb.clear().localInvalidate(9, window).localInvalidate(10, window)))
                    .as("twice in one batch").isInstanceOf(VerbsException.class)
                    .hasMessageContaining("request 1 of 2").hasMessageContaining("not bound on this queue pair");
            assertThat(sb.failedIndex()).isEqualTo(1);
            lb.b.post(sb.clear().read(11, local, 0, 64, window.remote(), 0));
            assertThat(lb.awaitOne(lb.cqB).status()).as("nothing of the refused batch was posted: still bound")
                    .isEqualTo(WcStatus.SUCCESS);
            assertBytes(local, 0, 64, MARK);

            lb.a.reset();
            lb.a.toInit();
            lb.a.toRtr(RtrAttributes.builder(lb.b.localEndpoint(0x2222)).build());
            lb.a.toRts(RtsAttributes.builder(0x1111).build());
            assertThatThrownBy(() -> lb.a.post(sb.clear().localInvalidate(12, window)))
                    .as("bound before the queue pair's reset").isInstanceOf(VerbsException.class)
                    .hasMessageContaining("not bound on this queue pair");
            assertThatThrownBy(() -> sb.clear().localInvalidate(13, type1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("type 1");
            assertThat(lb.a.state()).isEqualTo(QpState.RTS);
        }
    }

    @Test
    void aRegionBoundToAWindowClosesOnlyAfterTheWindow() throws Exception {
        try (Loopback lb = new Loopback(QpType.RC); SendBatch sb = new SendBatch(1, 1)) {
            MemoryRegion target = lb.pd.allocate(SIZE, AccessFlag.LOCAL_WRITE, AccessFlag.MW_BIND);
            MemoryWindow window = lb.pd.allocateWindow(MemoryWindow.Type.TYPE_2);
            lb.a.post(sb.bindWindow(1, window, target, 0, 64, AccessFlag.REMOTE_READ));
            assertThat(lb.awaitOne(lb.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            assertThatThrownBy(target::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("MemoryWindow");
            assertThat(target.isClosed()).isFalse();
            window.close();
            assertThatThrownBy(() -> sb.clear().localInvalidate(2, window)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(window::rkey).isInstanceOf(IllegalStateException.class);
            target.close();
            assertThat(target.isClosed()).isTrue();
        }
    }

    private static void assertBytes(MemoryRegion mr, long from, long length, byte value) {
        for (long i = from; i < from + length; i++) {
            byte b = mr.segment().get(ValueLayout.JAVA_BYTE, i);
            if (b != value) {
                throw new AssertionError("byte " + i + " of the region is 0x" + Integer.toHexString(b & 0xff)
                        + ", expected 0x" + Integer.toHexString(value & 0xff));
            }
        }
    }
}
