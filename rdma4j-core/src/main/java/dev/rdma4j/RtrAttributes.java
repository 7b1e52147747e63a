package dev.rdma4j;

/**
 * Attributes of the INIT → RTR transition of a connected QP: {@code IBV_QP_STATE | IBV_QP_AV |
 * IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN}, plus for RC {@code IBV_QP_MAX_DEST_RD_ATOMIC |
 * IBV_QP_MIN_RNR_TIMER}. Immutable; start from {@link #builder(QpEndpoint)}.
 *
 * @param remote          the peer's endpoint: dest QPN, RQ PSN, LID and GID
 * @param pathMtu         explicit path MTU, or {@code null}: the smaller of the local port's active MTU
 *                        and {@code remoteMtu}
 * @param remoteMtu       the peer's MTU when known, default 4096
 * @param maxDestRdAtomic RDMA reads/atomics the peer may have outstanding here, default 1
 * @param minRnrTimer     RNR NAK timer code, default 12 (0.64 ms)
 * @param global          whether to use a GRH, or {@code null}: yes on RoCE, or when the remote GID is set
 * @param sgidIndex       local GID index for the GRH, or -1: {@link Context#bestRoceGid(int)}
 * @param hopLimit        GRH hop limit, default 1
 * @param trafficClass    GRH traffic class, default 0
 * @param flowLabel       GRH flow label, default 0
 * @param serviceLevel    service level, default 0
 */
public record RtrAttributes(QpEndpoint remote, Mtu pathMtu, Mtu remoteMtu, int maxDestRdAtomic, int minRnrTimer,
        Boolean global, int sgidIndex, int hopLimit, int trafficClass, int flowLabel, int serviceLevel) {
    /**
     * Refuses values that do not fit their C fields instead of truncating them.
     *
     * @param remote          the peer's endpoint, not null
     * @param pathMtu         the path MTU or null
     * @param remoteMtu       the peer's MTU
     * @param maxDestRdAtomic 0..255
     * @param minRnrTimer     0..31
     * @param global          GRH or null
     * @param sgidIndex       -1 (best) or 0..255
     * @param hopLimit        0..255
     * @param trafficClass    0..255
     * @param flowLabel       0..0xfffff (20 bits)
     * @param serviceLevel    0..15
     * @throws IllegalArgumentException naming a value out of its range
     */
    public RtrAttributes {
        java.util.Objects.requireNonNull(remote, "remote");
        Ranges.check("maxDestRdAtomic", maxDestRdAtomic, 0, 255);
        Ranges.check("minRnrTimer", minRnrTimer, 0, 31);
        Ranges.check("sgidIndex", sgidIndex, -1, 255);
        Ranges.check("hopLimit", hopLimit, 0, 255);
        Ranges.check("trafficClass", trafficClass, 0, 255);
        Ranges.check("flowLabel", flowLabel, 0, 0xfffff);
        Ranges.check("serviceLevel", serviceLevel, 0, 15);
    }


    /**
     * Defaults for everything but the peer.
     *
     * @param remote the peer's endpoint
     * @return a builder
     */
    public static Builder builder(QpEndpoint remote) {
        return new Builder(remote);
    }

    /** Builds {@link RtrAttributes}. */
    public static final class Builder {
        private final QpEndpoint remote;
        private Mtu pathMtu;
        private Mtu remoteMtu = Mtu.MTU_4096;
        private int maxDestRdAtomic = 1;
        private int minRnrTimer = 12;
        private Boolean global;
        private int sgidIndex = -1;
        private int hopLimit = 1;
        private int trafficClass;
        private int flowLabel;
        private int serviceLevel;

        private Builder(QpEndpoint remote) {
            this.remote = java.util.Objects.requireNonNull(remote, "remote");
        }

        /**
         * Forces the path MTU.
         *
         * @param mtu the MTU
         * @return this
         */
        public Builder pathMtu(Mtu mtu) {
            this.pathMtu = mtu;
            return this;
        }

        /**
         * The peer's MTU, to take the smaller of it and the local active MTU.
         *
         * @param mtu the peer's MTU
         * @return this
         */
        public Builder remoteMtu(Mtu mtu) {
            this.remoteMtu = mtu;
            return this;
        }

        /**
         * Sets {@code max_dest_rd_atomic}.
         *
         * @param n outstanding incoming reads/atomics
         * @return this
         */
        public Builder maxDestRdAtomic(int n) {
            this.maxDestRdAtomic = n;
            return this;
        }

        /**
         * Sets {@code min_rnr_timer}.
         *
         * @param code the timer code (0..31)
         * @return this
         */
        public Builder minRnrTimer(int code) {
            this.minRnrTimer = code;
            return this;
        }

        /**
         * Forces a GRH on or off.
         *
         * @param global whether to set {@code is_global}
         * @return this
         */
        public Builder global(boolean global) {
            this.global = global;
            return this;
        }

        /**
         * Sets the local GID index of the GRH.
         *
         * @param index the index ({@code -g} of the C tools)
         * @return this
         */
        public Builder sgidIndex(int index) {
            this.sgidIndex = index;
            return this;
        }

        /**
         * Sets the GRH hop limit.
         *
         * @param hopLimit 1..255
         * @return this
         */
        public Builder hopLimit(int hopLimit) {
            this.hopLimit = hopLimit;
            return this;
        }

        /**
         * Sets the GRH traffic class.
         *
         * @param trafficClass 0..255
         * @return this
         */
        public Builder trafficClass(int trafficClass) {
            this.trafficClass = trafficClass;
            return this;
        }

        /**
         * Sets the GRH flow label.
         *
         * @param flowLabel 20 bits
         * @return this
         */
        public Builder flowLabel(int flowLabel) {
            this.flowLabel = flowLabel;
            return this;
        }

        /**
         * Sets the service level.
         *
         * @param sl 0..15
         * @return this
         */
        public Builder serviceLevel(int sl) {
            this.serviceLevel = sl;
            return this;
        }

        /**
         * Builds the attributes.
         *
         * @return the immutable attributes
         */
        public RtrAttributes build() {
            return new RtrAttributes(remote, pathMtu, remoteMtu, maxDestRdAtomic, minRnrTimer, global, sgidIndex,
                    hopLimit, trafficClass, flowLabel, serviceLevel);
        }
    }
}
