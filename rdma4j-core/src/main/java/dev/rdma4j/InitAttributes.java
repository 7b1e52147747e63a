package dev.rdma4j;

import java.util.EnumSet;
import java.util.Set;

/**
 * Attributes of the RESET → INIT transition ({@code ibv_modify_qp} with {@code IBV_QP_STATE |
 * IBV_QP_PKEY_INDEX | IBV_QP_PORT} and {@code IBV_QP_ACCESS_FLAGS} (RC/UC) or {@code IBV_QP_QKEY} (UD)).
 * Immutable; start from {@link #builder()}.
 *
 * @param port      the port, default 1
 * @param pkeyIndex the P_Key index, default 0
 * @param access    remote access the QP allows (RC/UC); default all remote rights for RC, remote write for UC
 * @param qkey      the Q_Key of a UD QP, default {@code 0x11111111} (as {@code ibv_ud_pingpong})
 */
public record InitAttributes(int port, int pkeyIndex, Set<AccessFlag> access, int qkey) {
    /** The Q_Key rdma-core's examples use. */
    public static final int DEFAULT_QKEY = 0x11111111;

    /**
     * Validates the value.
     *
     * @param port      the port
     * @param pkeyIndex the P_Key index
     * @param access    access rights, or {@code null} for the type's default
     * @param qkey      the Q_Key
     */
    public InitAttributes {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port must be 1..255: " + port);
        }
        Ranges.check("pkeyIndex", pkeyIndex, 0, 0xffff);
        access = access == null ? null : Set.copyOf(access);
    }

    /**
     * Defaults: port 1, P_Key index 0, the type's default access, Q_Key {@code 0x11111111}.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    int accessMask(QpType type) {
        Set<AccessFlag> a = access != null ? access : switch (type) {
            case RC -> EnumSet.of(AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE, AccessFlag.REMOTE_READ,
                    AccessFlag.REMOTE_ATOMIC);
            case UC -> EnumSet.of(AccessFlag.LOCAL_WRITE, AccessFlag.REMOTE_WRITE);
            case UD -> EnumSet.noneOf(AccessFlag.class);
        };
        return AccessFlag.mask(a);
    }

    /** Builds {@link InitAttributes}. */
    public static final class Builder {
        private int port = 1;
        private int pkeyIndex;
        private Set<AccessFlag> access;
        private int qkey = DEFAULT_QKEY;

        private Builder() {
        }

        /**
         * Sets the port.
         *
         * @param port from 1
         * @return this
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * Sets the P_Key index.
         *
         * @param pkeyIndex the index
         * @return this
         */
        public Builder pkeyIndex(int pkeyIndex) {
            this.pkeyIndex = pkeyIndex;
            return this;
        }

        /**
         * Sets the remote access rights ({@code qp_access_flags}).
         *
         * @param flags the rights, possibly none
         * @return this
         */
        public Builder access(AccessFlag... flags) {
            this.access = flags.length == 0 ? EnumSet.noneOf(AccessFlag.class) : EnumSet.of(flags[0], flags);
            return this;
        }

        /**
         * Sets the UD Q_Key.
         *
         * @param qkey the key
         * @return this
         */
        public Builder qkey(int qkey) {
            this.qkey = qkey;
            return this;
        }

        /**
         * Builds the attributes.
         *
         * @return the immutable attributes
         */
        public InitAttributes build() {
            return new InitAttributes(port, pkeyIndex, access, qkey);
        }
    }
}
