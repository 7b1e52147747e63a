package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.internal.ffi.CLayouts;
import dev.rdma4j.internal.ffi.Structs;
import dev.rdma4j.internal.ffi.WcView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkCompletions#get}'s snapshot reads an entry with one bulk copy and decodes every field from its 64-bit
 * words ({@link WcView#copy}): each field must come out as the accessor that reads it in place gives it, for
 * values that fill every bit of every field (a wrong shift or mask shows up as a neighbour's bits).
 */
class WorkCompletionsSnapshotTest {
    private static void put(MemorySegment wcs, int i, String field, ValueLayout layout, long value) {
        long at = i * WcView.SIZE + CLayouts.offset(Structs.IBV_WC, field);
        switch (layout) {
            case ValueLayout.OfLong l -> wcs.set(l, at, value);
            case ValueLayout.OfInt l -> wcs.set(l, at, (int) value);
            case ValueLayout.OfShort l -> wcs.set(l, at, (short) value);
            case ValueLayout.OfByte l -> wcs.set(l, at, (byte) value);
            default -> throw new IllegalArgumentException(layout.toString());
        }
    }

    /** Entry {@code i} with every field distinct and its high bits set; {@code status} as given. */
    private static void fill(MemorySegment wcs, int i, int status) {
        put(wcs, i, "wr_id", ValueLayout.JAVA_LONG, 0xfedc_ba98_7654_3210L + i);
        put(wcs, i, "status", ValueLayout.JAVA_INT, status);
        put(wcs, i, "opcode", ValueLayout.JAVA_INT, 128); // IBV_WC_RECV
        put(wcs, i, "vendor_err", ValueLayout.JAVA_INT, 0xf1f2_f3f4);
        put(wcs, i, "byte_len", ValueLayout.JAVA_INT, 40 + i);
        long imm = i * WcView.SIZE + CLayouts.offset(Structs.IBV_WC, "$imm", "imm_data");
        wcs.set(ValueLayout.JAVA_INT, imm, 0x8182_8384);
        put(wcs, i, "qp_num", ValueLayout.JAVA_INT, 0x00ff_fffe);
        put(wcs, i, "src_qp", ValueLayout.JAVA_INT, 0x00ab_cdef);
        put(wcs, i, "wc_flags", ValueLayout.JAVA_INT, 0xffff_fffe | WorkCompletions.FLAG_WITH_IMM);
        put(wcs, i, "pkey_index", ValueLayout.JAVA_SHORT, 0xfffd);
        put(wcs, i, "slid", ValueLayout.JAVA_SHORT, 0xfeed);
        put(wcs, i, "sl", ValueLayout.JAVA_BYTE, 0xf7);
        put(wcs, i, "dlid_path_bits", ValueLayout.JAVA_BYTE, 0xee);
    }

    @Test
    void theSnapshotHasEveryFieldAsTheInPlaceAccessorsReadIt() {
        try (WorkCompletions wcs = new WorkCompletions(3)) {
            MemorySegment seg = wcs.segment();
            fill(seg, 0, 0);
            fill(seg, 1, 5); // IBV_WC_WR_FLUSH_ERR
            fill(seg, 2, 0);
            wcs.count(3);
            for (int i = 0; i < 3; i++) {
                wcs.receive(i, true);
                WorkCompletion c = wcs.get(i);
                assertThat(c.wrId()).isEqualTo(wcs.wrId(i)).isEqualTo(0xfedc_ba98_7654_3210L + i);
                assertThat(c.status()).isEqualTo(wcs.status(i));
                assertThat(c.opcode()).isEqualTo(wcs.opcode(i));
                assertThat(c.byteLength()).isEqualTo(wcs.byteLength(i)).isEqualTo(40 + i);
                assertThat(c.immediateData()).isEqualTo(wcs.immediateData(i)).isEqualTo(0x8483_8281);
                assertThat(c.hasImmediate()).isEqualTo(wcs.hasImmediate(i)).isTrue();
                assertThat(c.qpNumber()).isEqualTo(wcs.qpNumber(i)).isEqualTo(0x00ff_fffe);
                assertThat(c.sourceQp()).isEqualTo(wcs.sourceQp(i)).isEqualTo(0x00ab_cdef);
                assertThat(c.flags()).isEqualTo(wcs.flags(i)).isEqualTo(0xffff_fffe | WorkCompletions.FLAG_WITH_IMM);
                assertThat(c.pkeyIndex()).isEqualTo(wcs.pkeyIndex(i)).isEqualTo(0xfffd);
                assertThat(c.slid()).isEqualTo(wcs.slid(i)).isEqualTo(0xfeed);
                assertThat(c.serviceLevel()).isEqualTo(WcView.sl(seg, i)).isEqualTo(0xf7);
                assertThat(c.vendorError()).isEqualTo(WcView.vendorErr(seg, i)).isEqualTo(0xf1f2_f3f4);
                assertThat(c.isReceive()).isTrue();
                assertThat(c.buffer()).isNull(); // no region was posted for these entries
            }
            assertThat(wcs.get(1).status()).isEqualTo(WcStatus.of(5));
        }
    }
}
