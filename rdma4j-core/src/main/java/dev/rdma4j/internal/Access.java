package dev.rdma4j.internal;

import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.VerbsException;
import java.lang.foreign.MemorySegment;

/**
 * What the other rdma4j packages (rdma_cm in {@code dev.rdma4j.connect}) may do with the verbs objects
 * beyond their public API; implemented by {@code dev.rdma4j}, never exported (the JDK's SharedSecrets
 * pattern).
 */
public interface Access {
    /** Creates a QP on an rdma_cm id: {@code create} runs rdma_create_qp, {@code destroy} rdma_destroy_qp. */
    interface QpVerbs {
        MemorySegment create(MemorySegment pd, MemorySegment initAttr) throws VerbsException;

        void destroy(MemorySegment qp) throws VerbsException;
    }

    /** A Context over an {@code ibv_context} that librdmacm opened and will close. */
    Context borrowContext(MemorySegment ibvContext) throws VerbsException;

    MemorySegment handle(ProtectionDomain pd);

    QueuePair createQueuePair(QueuePair.Builder builder, QpVerbs verbs) throws VerbsException;

    /** rdma_cm moved the QP itself (connect/accept/disconnect). */
    void stateChanged(QueuePair qp, QpState state);

    /** Set once by dev.rdma4j's initialisation. */
    static Access get() {
        Holder.init();
        return Holder.access;
    }

    /** Holds the implementation. */
    final class Holder {
        static volatile Access access;

        private Holder() {
        }

        public static void set(Access a) {
            access = a;
        }

        static void init() {
            if (access == null) {
                try {
                    Class.forName("dev.rdma4j.AccessImpl", true, Access.class.getClassLoader());
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
