package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On-demand paging and the extended device attributes on the device ({@code ibv_query_device_ex},
 * {@code IBV_ACCESS_ON_DEMAND}, {@code ibv_advise_mr}). rxe pages nothing on demand: the attributes say so, and the
 * registration and the advice are refused with the verb and its errno, not a crash.
 */
@Tag("device")
class OnDemandPagingDeviceTest {
    @Test
    void theExtendedAttributesAgreeWithTheBaseOnesAndSayWhatRxeLacks() throws Exception {
        try (Context ctx = TestDevice.device().open()) {
            ExtendedDeviceAttributes x = ctx.queryDeviceExtended();
            assertThat(x.base()).isEqualTo(ctx.queryDevice());
            assertThat(x.onDemandPaging().supported()).as("rxe has no on-demand paging").isFalse();
            assertThat(x.onDemandPaging().rc()).isZero();
            assertThat(x.completionTimestampMask()).as("rxe's completions carry no timestamp").isZero();
            assertThat(x.tagMatchingMaxTags()).isZero();
        }
    }

    @Test
    void anOnDemandRegistrationAndAnAdviceAreRefusedClearly() throws Exception {
        try (Context ctx = TestDevice.device().open(); ProtectionDomain pd = ctx.allocateProtectionDomain();
                MemoryRegion plain = pd.allocate(4096, AccessFlag.LOCAL_WRITE)) {
            assertThatThrownBy(() -> pd.allocate(4096, AccessFlag.LOCAL_WRITE, AccessFlag.ON_DEMAND).close())
                    .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_reg_mr");
            assertThatThrownBy(() -> plain.advise(MemoryRegion.Advice.PREFETCH, 0, 4096, true))
                    .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_advise_mr")
                    .satisfies(e -> assertThat(((VerbsException) e).errno()).isEqualTo(95)); // EOPNOTSUPP
            assertThatThrownBy(() -> plain.advise(MemoryRegion.Advice.PREFETCH, 4000, 200, false))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
