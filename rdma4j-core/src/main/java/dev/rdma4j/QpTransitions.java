package dev.rdma4j;

import dev.rdma4j.internal.ffi.CConstants;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.QpAttrs;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A {@link QueuePair}'s state machine: each transition checks the state it follows, has {@link QpAttrs} write its
 * members of {@code struct ibv_qp_attr} (returning the mask) and calls {@code ibv_modify_qp}; and the query.
 *
 * <p>Threading: the transitions run under the queue pair's monitor (its public transitions are synchronized);
 * {@link #query} on any thread.
 */
final class QpTransitions {
    private QpTransitions() {
    }

    /** Fills a transition's members of {@code struct ibv_qp_attr} and returns its mask ({@link QpAttrs}). */
    interface AttrWriter {
        int write(MemorySegment attr);
    }

    static void toInit(QueuePair qp, InitAttributes a) throws VerbsException {
        expect(qp, QpState.RESET, QpState.INIT);
        QpType type = qp.type();
        modify(qp, QpState.INIT, "RESET -> INIT", s -> QpAttrs.toInit(s, a.pkeyIndex(), a.port(), type == QpType.UD,
                a.qkey(), a.accessMask(type)));
        qp.port = a.port();
    }

    static void toRtr(QueuePair qp, RtrAttributes r) throws VerbsException {
        QpType type = qp.type();
        if (type == QpType.UD) {
            throw new IllegalStateException("a UD queue pair has no remote side: use toRtr()");
        }
        expect(qp, QpState.INIT, QpState.RTR);
        Context context = qp.protectionDomain().context();
        int port = qp.port;
        PortAttributes p = context.queryPort(port);
        Mtu mtu = r.pathMtu() != null ? r.pathMtu() : p.activeMtu().min(r.remoteMtu());
        boolean global = r.global() != null ? r.global() : p.isRoce() || !r.remote().gid().isZero();
        int sgid = !global ? 0 : r.sgidIndex() >= 0 ? r.sgidIndex() : context.bestRoceGid(port).index();
        AddressHandle.Attributes av = new AddressHandle.Attributes(port, r.remote().lid(), r.serviceLevel(), global,
                r.remote().gid(), sgid, r.hopLimit(), r.trafficClass(), r.flowLabel());
        modify(qp, QpState.RTR, "INIT -> RTR", s -> {
            AddressHandle.encode(s, true, av);
            return QpAttrs.toRtr(s, mtu.code(), r.remote().qpn(), r.remote().psn(), type == QpType.RC,
                    r.maxDestRdAtomic(), r.minRnrTimer());
        });
    }

    /** INIT → RTR of a UD queue pair: the state only. */
    static void toRtr(QueuePair qp) throws VerbsException {
        if (qp.type() != QpType.UD) {
            throw new IllegalStateException("a connected queue pair needs the peer: use toRtr(RtrAttributes)");
        }
        expect(qp, QpState.INIT, QpState.RTR);
        modify(qp, QpState.RTR, "INIT -> RTR", s -> QpAttrs.stateOnly());
    }

    static void toRts(QueuePair qp, RtsAttributes a) throws VerbsException {
        expect(qp, QpState.RTR, QpState.RTS);
        boolean rc = qp.type() == QpType.RC;
        modify(qp, QpState.RTS, "RTR -> RTS", s -> QpAttrs.toRts(s, a.sqPsn(), rc, a.timeout(), a.retryCount(),
                a.rnrRetry(), a.maxRdAtomic()));
    }

    static QpAttributes query(QueuePair qp) throws VerbsException {
        qp.acquire(false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment[] q = QpAttrs.forQuery(a);
            ResourceVerbs.queryQp(qp.handle, q[0], CConstants.IBV_QP_QUERY_ALL, q[1]);
            return QpAttributes.of(QpAttrs.queried(q[0]), QpAttrs.queriedDgid(q[0]));
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            qp.release(false);
        }
    }

    private static void expect(QueuePair qp, QpState from, QpState to) {
        qp.ensureOpen();
        QpState state = qp.state;
        if (state != from) {
            throw new IllegalStateException(qp.label() + " is in " + state + ": " + to + " can only follow " + from
                    + " (RESET -> INIT -> RTR -> RTS)");
        }
    }

    /** {@code ibv_modify_qp} to {@code target} with the members {@code writer} fills; the state follows. */
    static void modify(QueuePair qp, QpState target, String what, AttrWriter writer) throws VerbsException {
        qp.acquire(false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttrs.attr(a, target.code());
            int mask = writer.write(attr);
            ResourceVerbs.modifyQp(qp.handle, attr, mask, "QP #" + qp.qpNumber() + " " + what);
            qp.state = target;
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            qp.release(false);
        }
    }
}
