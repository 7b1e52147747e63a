package dev.rdma4j;

import dev.rdma4j.internal.ffi.CEnums;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.ResourceVerbs;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A memory window ({@code struct ibv_mw}, from {@code ibv_alloc_mw}): a remote key of its own for a sub-range of a
 * registered region, which the owner grants a peer and takes back without touching the region's registration.
 * A peer reaches the window's range with {@link #remote()} (address, length, the window's rkey) while it is bound,
 * and fails with {@link WcStatus#REM_ACCESS_ERR} outside the range or after the window is invalidated.
 *
 * <ul>
 *   <li><b>Type 1</b> ({@link Type#TYPE_1}): bound with {@link #bind} ({@code ibv_bind_mw}); each
 *       bind replaces the previous one and gives the window a new rkey (the old one stops working).</li>
 *   <li><b>Type 2</b> ({@link Type#TYPE_2}): bound by a work request on a queue pair of the same protection domain
 *       ({@link SendBatch#bindWindow}, {@code IBV_WR_BIND_MW}), unbound by a local invalidate
 *       ({@link SendBatch#localInvalidate}, {@code IBV_WR_LOCAL_INV}) or by the peer's send with invalidate
 *       ({@link SendBatch#sendWithInvalidate}, {@code IBV_WR_SEND_WITH_INV}); a bound type 2 window must be
 *       invalidated before it is bound again.</li>
 * </ul>
 *
 * <p>Each bind takes the next key ({@code ibv_inc_rkey}: the low 8 bits of the rkey, which belong to the consumer),
 * so a key handed out before cannot reach the new range. The region bound must belong to the window's protection
 * domain and be registered with {@link AccessFlag#MW_BIND}; remote write or atomic access through the window needs
 * the region's {@link AccessFlag#LOCAL_WRITE} (the verbs' rule C10-74). rdma4j checks these before posting, so a
 * mistake is an {@link IllegalArgumentException}, not a failed completion that moves the queue pair to error.
 * The bind request pins the window and the region until it completes; a region stays in use by the window (its
 * {@code close()} refused, naming the window) until the window is closed or bound to another region.
 *
 * <p>With an {@code AsyncQueuePair} driving the queue pair, post a batch holding the bind, the invalidate or the
 * send with invalidate with its {@code postAsync}.
 *
 * <p><b>On rxe</b> (Soft-RoCE, Linux 6.12), the responder checks a window's key, state and access and then the range of
 * the <em>region</em> under it, not the window's range: a peer holding the window's key reaches the whole region with
 * the window's access until the window is invalidated (revocation works; confinement does not). Hardware that keeps
 * to the verbs confines the peer to the window. rxe also reports a send with invalidate with the kernel's flag bit
 * ({@code 1 << 2}, verbs.h's {@code IBV_WC_IP_CSUM_OK}) instead of {@code IBV_WC_WITH_INV}; see
 * {@link WorkCompletion#invalidatedRkey()}.
 *
 * <p><b>Invalidating a window that is not bound</b> is refused before it is posted: a local invalidate goes on the
 * queue pair that posted the window's last bind (since that queue pair's last reset), and not twice for one bind;
 * else the post fails with {@code EINVAL} and says why. rxe (Linux 6.12) takes an invalidate of a type 2 window in its
 * free state (never bound, or invalidated already) as one of a bound window and dereferences the queue pair the window
 * does not have: the kernel oopses in {@code rxe_invalidate_mw} and the host goes down. rdma4j tracks its own binds
 * and invalidates only, not a peer's send with invalidate: on rxe, do not invalidate locally a window the peer may
 * have invalidated with a send with invalidate, and send with invalidate once per bind (the peer's kernel fails the
 * same way; {@link SendBatch#sendWithInvalidate} is not checked against windows, this process's own included).
 *
 * <p>The window's rkey as this object reports it is the key of the last bind <em>posted</em>: a bind that fails
 * (a failed completion, the queue pair in error) leaves the device with the old key, and the window should then be
 * closed. {@code ibv_dealloc_mw} on {@link #close()}.
 *
 * <p>Threading: thread-safe; binds of one window posted from several threads at once are serialised by the window
 * (the device applies them in posting order per queue pair).
 */
public final class MemoryWindow extends NativeResource {
    /** A memory window's type ({@code enum ibv_mw_type}). */
    public enum Type {
        /** {@code IBV_MW_TYPE_1}: bound with {@code ibv_bind_mw}. */
        TYPE_1(CEnums.IBV_MW_TYPE_1),
        /** {@code IBV_MW_TYPE_2}: bound with a work request ({@code IBV_WR_BIND_MW}). */
        TYPE_2(CEnums.IBV_MW_TYPE_2);

        private final int code;

        Type(int code) {
            this.code = code;
        }

        /**
         * The C value.
         *
         * @return {@code IBV_MW_TYPE_1} or {@code IBV_MW_TYPE_2}
         */
        public int code() {
            return code;
        }
    }

    /** The access a window may grant ({@code mw_access_flags}). */
    private static final Set<AccessFlag> WINDOW_ACCESS = Set.of(AccessFlag.REMOTE_READ, AccessFlag.REMOTE_WRITE,
            AccessFlag.REMOTE_ATOMIC, AccessFlag.ZERO_BASED);

    private final ProtectionDomain pd;
    private final Type type;
    private final MemorySegment handle;
    /** The region of the last bind posted (a dependent of it), or null. Guarded by this. */
    private MemoryRegion boundRegion;
    /** What the last bind posted exposes, or null before the first. */
    private volatile RemoteRegion remote;
    /** The queue pair of the last type 2 bind posted and not invalidated by a request posted since, or null. */
    private QueuePair boundOn;
    /** {@link #boundOn}'s {@code token} at that bind: a reset of the queue pair gives it another. */
    private int boundToken;

    MemoryWindow(ProtectionDomain pd, Type type) throws VerbsException {
        super("MemoryWindow(" + type + ")", pd, true);
        this.pd = pd;
        this.type = type;
        MemorySegment mw;
        try {
            mw = ResourceVerbs.allocMw(pd.handle(), type.code());
        } catch (NativeException e) {
            abandon();
            throw VerbsException.from(e);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
        this.handle = mw;
    }

    /**
     * The window's type.
     *
     * @return type 1 or type 2
     */
    public Type type() {
        return type;
    }

    /**
     * The protection domain the window was allocated in ({@code ibv_alloc_mw}'s {@code pd}).
     *
     * @return the protection domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The window's current remote key ({@code mw->rkey}): after a bind is posted, the key of that bind.
     *
     * @return the rkey
     * @throws IllegalStateException if the window is closed
     */
    public int rkey() {
        acquire(false);
        try {
            return ResourceVerbs.mwRkey(handle);
        } finally {
            release(false);
        }
    }

    /**
     * What the last bind posted exposes, for a peer's RDMA read, write or atomic: the address (the region's
     * virtual address, or an offset from 0 for a zero-based window), the length and the window's rkey. The peer's
     * requests succeed once the bind completed and until the window is invalidated, bound again or closed.
     *
     * @return the remote view of the window's range
     * @throws IllegalStateException if no bind was posted yet
     */
    public RemoteRegion remote() {
        RemoteRegion r = remote;
        if (r == null) {
            throw new IllegalStateException(this + " was never bound: bind it first (SendBatch.bindWindow for type 2,"
                    + " MemoryWindow.bind for type 1)");
        }
        return r;
    }

    /**
     * Binds this type 1 window to a range of a region ({@code ibv_bind_mw}): the provider posts the bind on
     * {@code qp}'s send queue (its completion, {@code IBV_WC_BIND_MW} with {@code wrId}, arrives on the send CQ) and
     * gives the window its next key; the old key stops working once the bind completes. The request pins the window
     * and the region until it completes.
     *
     * @param qp     an RC or UC queue pair of the window's protection domain, in RTS, not driven by an
     *               {@code AsyncQueuePair}
     * @param wrId   returned in the completion
     * @param region registered with {@link AccessFlag#MW_BIND}, in the same protection domain
     * @param offset where the window starts in the region
     * @param length bytes, positive
     * @param access what the peer may do: {@link AccessFlag#REMOTE_READ}, {@link AccessFlag#REMOTE_WRITE},
     *               {@link AccessFlag#REMOTE_ATOMIC}
     * @throws VerbsException           if the verb refused the bind ({@code EINVAL} for a QP not in RTS,
     *                                  {@code ENOMEM} when the send queue is full); nothing was posted
     * @throws IllegalArgumentException if the window is of type 2 ({@link SendBatch#bindWindow} binds those), the QP
     *                                  is UD or of another protection domain, or the range, the region or the access
     *                                  is wrong as {@link SendBatch#bindWindow} says
     * @throws IllegalStateException    if the QP, the window or the region is closed, or an {@code AsyncQueuePair}
     *                                  drives the QP
     */
    public void bind(QueuePair qp, long wrId, MemoryRegion region, long offset, long length, AccessFlag... access)
            throws VerbsException {
        qp.completions.refuseIfDriven();
        if (type != Type.TYPE_1) {
            throw new IllegalArgumentException(this + " is of type 2: bind it with a work request"
                    + " (SendBatch.bindWindow); ibv_bind_mw binds type 1 windows");
        }
        if (qp.protectionDomain() != pd || qp.type() == QpType.UD) {
            throw new IllegalArgumentException(qp.label() + " cannot bind " + this + ": "
                    + (qp.type() == QpType.UD ? "UD queue pairs bind no windows" : "another protection domain"));
        }
        int flags = checkBind(region, offset, length, Set.of(access));
        long address = region.address() + offset;
        qp.ensureOpen();
        qp.sendLock.lock(); // as a post: the QP's destroy takes it first
        try {
            if (qp.destroyed) {
                throw qp.closedError();
            }
            QpState s = qp.state;
            if (s != QpState.RTS && s != QpState.SQD) {
                throw VerbsException.of("ibv_bind_mw", dev.rdma4j.internal.ffi.CConstants.EINVAL, qp.label()
                        + " is in state " + s + ": binds are posted in RTS");
            }
            WorkRing ring = qp.sendRing;
            if (ring.free() < 1) {
                throw VerbsException.of("ibv_bind_mw", dev.rdma4j.internal.ffi.Libc.ENOMEM, qp.label()
                        + ": the send queue is full");
            }
            long seq = ring.claim(wrId, null, 0);
            int rc;
            try {
                ring.pin(seq, this); // refused once a close began; a close is refused from here on
                ring.pin(seq, region);
                WorkRing.publish();
                rc = ResourceVerbs.bindMw(qp.handle.address(), handle, WorkRequestIds.encode(qp.token, false, seq),
                        dev.rdma4j.internal.ffi.WrView.SEND_SIGNALED, region.handle().address(), address, length,
                        flags);
            } catch (RuntimeException e) {
                ring.unclaim(seq);
                throw e;
            }
            if (rc != 0) {
                ring.unclaim(seq);
                throw VerbsException.of("ibv_bind_mw", rc, qp.label() + ": the provider refused the bind of " + this);
            }
            bindPosted(0, region, address, length, false, qp);
        } finally {
            qp.sendLock.unlock();
        }
    }

    MemorySegment handle() {
        return handle;
    }

    /**
     * The checks a bind of {@code region}'s range takes before anything is posted; returns the C access flags.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    int checkBind(MemoryRegion region, long offset, long length, Set<AccessFlag> access) {
        java.util.Objects.requireNonNull(region, "region: binding a window needs a region (unbinding is an"
                + " invalidate)");
        if (length <= 0) {
            throw new IllegalArgumentException("a window's length must be positive: " + length);
        }
        Ranges.checkSlice("offset", offset, "length", length, "the region", region.length());
        if (region.protectionDomain() != pd) {
            throw new IllegalArgumentException(region + " belongs to another protection domain than " + this);
        }
        if (!region.access().contains(AccessFlag.MW_BIND)) {
            throw new IllegalArgumentException(region + " was registered without AccessFlag.MW_BIND: windows cannot"
                    + " be bound to it");
        }
        int flags = 0;
        for (AccessFlag f : access) {
            if (!WINDOW_ACCESS.contains(f)) {
                throw new IllegalArgumentException("a window grants " + WINDOW_ACCESS + " only, not " + f);
            }
            flags |= f.bit();
        }
        if ((access.contains(AccessFlag.REMOTE_WRITE) || access.contains(AccessFlag.REMOTE_ATOMIC))
                && !region.access().contains(AccessFlag.LOCAL_WRITE)) {
            throw new IllegalArgumentException("remote write or atomic access through a window needs the region's"
                    + " AccessFlag.LOCAL_WRITE, which " + region + " lacks");
        }
        if (type == Type.TYPE_1 && access.contains(AccessFlag.ZERO_BASED)) {
            throw new IllegalArgumentException("a type 1 window cannot be zero-based");
        }
        return flags;
    }

    /** The next key ({@code ibv_inc_rkey}): the consumer's low 8 bits advanced by one, the index kept. */
    static int nextRkey(int rkey) {
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }

    /**
     * Whether a local invalidate posted on {@code qp} now finds the window bound: its last bind was posted on
     * {@code qp} since the queue pair's last reset and no invalidate was posted after it.
     */
    synchronized boolean boundOn(QueuePair qp) {
        return boundOn == qp && boundToken == qp.token;
    }

    /** A local invalidate of this window was posted on {@code qp}: it unbinds the window if bound there. */
    synchronized void invalidatePosted(QueuePair qp) {
        if (boundOn == qp) {
            boundOn = null;
        }
    }

    /**
     * A bind of this window was posted on {@code qp}: the window's key is now {@code rkey} (written to
     * {@code mw->rkey} for type 2; the provider did it for type 1, whose {@code rkey} argument is ignored), the region
     * in use by it. The request may have completed already and the window or the region been closed meanwhile (on
     * another thread): then nothing is written, or the region is not tracked.
     */
    synchronized void bindPosted(int rkey, MemoryRegion region, long address, long length, boolean zeroBased,
            QueuePair qp) {
        try {
            acquire(false); // a close waits for this; a closed window is left alone
        } catch (IllegalStateException closed) {
            return;
        }
        try {
            int key = rkey;
            boundOn = qp;
            boundToken = qp.token;
            if (type == Type.TYPE_2) {
                ResourceVerbs.mwRkey(handle, rkey);
            } else {
                key = ResourceVerbs.mwRkey(handle);
            }
            if (boundRegion != region) {
                MemoryRegion now = region;
                try {
                    region.addDependent(this);
                } catch (IllegalStateException closed) {
                    now = null; // completed and closed already: nothing left to protect
                }
                if (boundRegion != null) {
                    boundRegion.removeDependent(this);
                }
                boundRegion = now;
            }
            remote = new RemoteRegion(zeroBased ? 0 : address, length, key);
        } finally {
            release(false);
        }
    }

    @Override
    void destroy() {
        try {
            ResourceVerbs.deallocMw(handle);
        } catch (NativeException e) {
            throw new IllegalStateException(e.getMessage(), VerbsException.from(e));
        }
        synchronized (this) {
            if (boundRegion != null) {
                boundRegion.removeDependent(this);
                boundRegion = null;
            }
        }
    }
}
