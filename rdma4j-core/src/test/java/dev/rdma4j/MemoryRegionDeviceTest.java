package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Protection domains and memory regions on the device. */
@Tag("device")
class MemoryRegionDeviceTest {

    @Test
    void registersOffHeapMemoryWithKeys() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            MemorySegment seg = Arena.ofAuto().allocate(8192);
            try (MemoryRegion mr = pd.register(seg, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ)) {
                assertThat(mr.address()).isEqualTo(seg.address());
                assertThat(mr.length()).isEqualTo(8192);
                assertThat(mr.segment()).isEqualTo(seg);
                assertThat(mr.access()).containsExactlyInAnyOrder(AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_READ);
                assertThat(mr.remote()).isEqualTo(new RemoteRegion(seg.address(), 8192, mr.rkey()));
                assertThat(mr.remote(100, 50)).isEqualTo(new RemoteRegion(seg.address() + 100, 50, mr.rkey()));
                assertThatThrownBy(() -> mr.remote(8000, 500)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("offset 8000 + size 500 exceeds the 8192 bytes of the region");
                assertThat(mr.protectionDomain()).isSameAs(pd);
            }
        }
    }

    @Test
    void allocatedRegionsArePageAlignedZeroedAndOwned() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            MemoryRegion a = pd.allocate(10_000, AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
            MemoryRegion b = pd.allocate(1);
            assertThat(a.address() % 4096).isZero();
            assertThat(a.segment().asByteBuffer().remaining()).isEqualTo(10_000);
            assertThat(a.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).containsOnly(0);
            assertThat(a.lkey()).isNotEqualTo(b.lkey());
            a.close();
            assertThat(a.segment().scope().isAlive()).isFalse(); // the region freed its memory
            b.close();
        }
    }

    @Test
    void registerTakesOnlyMemoryThatCannotBeFreedWhileRegistered() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            MemorySegment direct = MemorySegment.ofBuffer(java.nio.ByteBuffer.allocateDirect(4096));
            for (MemorySegment seg : new MemorySegment[] {Arena.ofAuto().allocate(4096), Arena.global().allocate(64),
                    direct, direct.asSlice(1024, 512)}) {
                try (MemoryRegion mr = pd.register(seg, AccessFlag.LOCAL_WRITE)) {
                    assertThat(mr.segment()).isSameAs(seg);
                    assertThat(mr.address()).isEqualTo(seg.address());
                }
            }
            for (MemorySegment seg : new MemorySegment[] {confined.allocate(4096), shared.allocate(4096),
                    MemorySegment.ofBuffer(shared.allocate(4096).asByteBuffer())}) {
                assertThatThrownBy(() -> pd.register(seg, AccessFlag.LOCAL_WRITE))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("its arena can be closed while the device uses it")
                        .hasMessageContaining("ProtectionDomain.allocate").hasMessageContaining("registerUnsafe");
                try (MemoryRegion mr = pd.registerUnsafe(seg, AccessFlag.LOCAL_WRITE)) { // the caller vouches
                    assertThat(mr.segment()).isSameAs(seg);
                    assertThat(mr.toString()).contains("registerUnsafe");
                }
            }
            Arena closed = Arena.ofShared();
            MemorySegment gone = closed.allocate(64);
            closed.close();
            assertThatThrownBy(() -> pd.registerUnsafe(gone, AccessFlag.LOCAL_WRITE))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("arena is closed");
        }
    }

    @Test
    void misuseIsRefusedBeforeTheVerb() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            Arena arena = Arena.ofAuto();
            assertThatThrownBy(() -> pd.register(MemorySegment.ofArray(new byte[64]), AccessFlag.LOCAL_WRITE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("off-heap");
            assertThatThrownBy(() -> pd.registerUnsafe(MemorySegment.ofArray(new byte[64]), AccessFlag.LOCAL_WRITE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("off-heap");
            assertThatThrownBy(() -> pd.register(arena.allocate(64), AccessFlag.REMOTE_WRITE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("require LOCAL_WRITE");
            assertThatThrownBy(() -> pd.allocate(64, AccessFlag.REMOTE_ATOMIC))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("require LOCAL_WRITE");
            assertThatThrownBy(() -> pd.allocate(0)).isInstanceOf(IllegalArgumentException.class);
            // more than any process can have: the JDK's OutOfMemoryError for native memory, which the misuse
            // fuzzer's seed -3786311798308004172 found escaping, is the verbs' ENOMEM
            assertThatThrownBy(() -> pd.allocate(Long.MAX_VALUE)).isInstanceOfSatisfying(VerbsException.class, e -> {
                assertThat(e.verb()).isEqualTo("malloc");
                assertThat(e.errno()).isEqualTo(12);
            });
            pd.allocate(64).close(); // and the domain still works
            assertThatThrownBy(() -> pd.register(MemorySegment.NULL)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void parentsRefuseToCloseUnderChildrenAndCloseIsIdempotent() throws Exception {
        Context ctx = TestDevice.device().open();
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        MemoryRegion mr = pd.allocate(4096, AccessFlag.LOCAL_WRITE);
        assertThatThrownBy(ctx::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("still used");
        assertThatThrownBy(pd::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot close ProtectionDomain");
        mr.close();
        mr.close();
        pd.close();
        pd.close();
        assertThatThrownBy(() -> pd.allocate(64)).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        ctx.close();
        assertThat(ctx.isClosed()).isTrue();
    }

    /** Issue 12: a read-only segment was accepted with LOCAL_WRITE, and the device then wrote into it. */
    @Test
    void aReadOnlySegmentIsRefusedWithWriteAccess() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            MemorySegment readOnly = Arena.ofAuto().allocate(4096, 4096).asReadOnly();
            for (AccessFlag write : new AccessFlag[] {AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE}) {
                assertThatThrownBy(() -> pd.register(readOnly, AccessFlag.LOCAL_WRITE, write))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read-only segment");
            }
            try (MemoryRegion mr = pd.register(readOnly, AccessFlag.REMOTE_READ)) {
                assertThat(mr.rkey()).isNotZero();
            }
        }
    }

    /** Issue 12: a segment confined to another thread failed with WrongThreadException from inside the FFI. */
    @Test
    void aSegmentOfAnotherThreadIsRefusedInTheApisTerms() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment mine = confined.allocate(4096, 4096);
                Thread.ofPlatform().start(() -> {
                    try {
                        pd.registerUnsafe(mine, AccessFlag.LOCAL_WRITE).close();
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(e);
                    }
                }).join();
            }
            assertThat(outcome.get()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("confined to another thread");
        }
    }
}
