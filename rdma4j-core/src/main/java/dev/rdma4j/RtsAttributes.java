package dev.rdma4j;

/**
 * Attributes of the RTR → RTS transition: {@code IBV_QP_STATE | IBV_QP_SQ_PSN}, plus for RC
 * {@code IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC}.
 * Immutable; start from {@link #builder(int)}.
 *
 * @param sqPsn       this side's initial send PSN (what the peer got as our endpoint's psn)
 * @param timeout     local ACK timeout exponent (4.096 µs × 2^timeout), default 14
 * @param retryCount  transport retries, default 7
 * @param rnrRetry    receiver-not-ready retries, default 7 (infinite)
 * @param maxRdAtomic outstanding RDMA reads/atomics this side initiates, default 1
 */
public record RtsAttributes(int sqPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {
    /**
     * Refuses values that do not fit their C fields ({@code sq_psn} 24 bits, {@code timeout} 5,
     * {@code retry_cnt} and {@code rnr_retry} 3, {@code max_rd_atomic} 8).
     *
     * @param sqPsn       0..0xffffff
     * @param timeout     0..31
     * @param retryCount  0..7
     * @param rnrRetry    0..7
     * @param maxRdAtomic 0..255
     * @throws IllegalArgumentException naming a value out of its range
     */
    public RtsAttributes {
        Ranges.check("sqPsn", sqPsn, 0, 0xffffff);
        Ranges.check("timeout", timeout, 0, 31);
        Ranges.check("retryCount", retryCount, 0, 7);
        Ranges.check("rnrRetry", rnrRetry, 0, 7);
        Ranges.check("maxRdAtomic", maxRdAtomic, 0, 255);
    }

    /**
     * Defaults for everything but the PSN.
     *
     * @param sqPsn this side's initial send PSN
     * @return a builder
     */
    public static Builder builder(int sqPsn) {
        return new Builder(sqPsn);
    }

    /** Builds {@link RtsAttributes}. */
    public static final class Builder {
        private final int sqPsn;
        private int timeout = 14;
        private int retryCount = 7;
        private int rnrRetry = 7;
        private int maxRdAtomic = 1;

        private Builder(int sqPsn) {
            this.sqPsn = sqPsn;
        }

        /**
         * Sets the local ACK timeout exponent.
         *
         * @param timeout 0..31
         * @return this
         */
        public Builder timeout(int timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * Sets the transport retry count.
         *
         * @param retryCount 0..7
         * @return this
         */
        public Builder retryCount(int retryCount) {
            this.retryCount = retryCount;
            return this;
        }

        /**
         * Sets the RNR retry count.
         *
         * @param rnrRetry 0..7, 7 meaning infinite
         * @return this
         */
        public Builder rnrRetry(int rnrRetry) {
            this.rnrRetry = rnrRetry;
            return this;
        }

        /**
         * Sets the outstanding RDMA reads/atomics initiated.
         *
         * @param maxRdAtomic at least 1 for reads and atomics
         * @return this
         */
        public Builder maxRdAtomic(int maxRdAtomic) {
            this.maxRdAtomic = maxRdAtomic;
            return this;
        }

        /**
         * Builds the attributes.
         *
         * @return the immutable attributes
         */
        public RtsAttributes build() {
            return new RtsAttributes(sqPsn, timeout, retryCount, rnrRetry, maxRdAtomic);
        }
    }
}
