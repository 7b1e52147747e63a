package dev.rdma4j;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Life cycle shared by every object that owns a native verbs handle: an idempotent, race-free
 * {@code close()} (one CAS wins), a refusal to close while children are open, use-after-close as
 * {@link IllegalStateException}, and leak reporting for objects collected while still open.
 *
 * <p>One counter does it all: {@code >= 0} counts live children plus calls in progress, {@code -1}
 * is closed, and the {@code CLOSING} bit, set by the one {@code close()} that won, refuses new calls
 * while those in progress finish. A call in progress keeps the handle alive, so no native call can race
 * a destroy, and callers acquiring in a tight loop cannot starve a close. The hot calls (poll, post) do not
 * count themselves: they read the counter (refused once a close is announced), then check a flag under the
 * lock that serialises them anyway, which the subclass's {@link #destroy} takes first ({@link #closedError}).
 *
 * <p>Posted work requests pin the regions and address handles they use on a striped count instead
 * ({@link #pin(int)}): each work queue increments a stripe of its own, so queue pairs posting from different
 * threads with one shared region do no contended atomic per request; the pin reads the counter above for
 * {@code CLOSING}, and the close that set it sums the stripes (a Dekker handshake: one of the two sees the
 * other), so a region with posted requests still cannot close.
 *
 * <p>A refused close names what still uses the object: the objects that depend on it (kept in a concurrent
 * map per object, updated only when objects are created and closed) and, apart from them, the number of
 * posted work requests pinning it (the stripes, so posting stays free of allocation and locks).
 * At {@link LeakDetection.Level#PARANOID} ({@code -Ddev.rdma4j.leakDetection=paranoid}, as Netty's leak detector
 * does, at the cost of a stack walk per object created), every object records where it was created; refused closes
 * and leak reports then say it. Objects collected without {@code close()} are reported by {@link LeakDetection}
 * (a {@link Cleaner} registration per object, unless the level is {@code DISABLED}); nothing of it is on the hot
 * paths.
 */
abstract class NativeResource implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final int CLOSED = -1;
    /** Set while a close waits for the calls in progress: {@link #acquire} refuses. */
    private static final int CLOSING = 1 << 30;

    /** How many dependents a refused close lists by name. */
    private static final int NAMED = 10;
    private static final java.net.URL LIBRARY = location(NativeResource.class);

    private final String description;
    private final NativeResource parent;
    private final Leak leak;
    private final AtomicInteger children = new AtomicInteger();
    /**
     * The posted work requests pinning this object, striped: each work queue counts its pins on a stripe of its
     * own ({@link #pinStripe()}), {@value #PAD} longs (a cache line and its neighbour) apart, so queue pairs posting
     * from different threads do no contended atomic per request on a shared region; {@code close()} sums the
     * stripes. Null for objects that requests do not pin; their pins go to {@link #children}.
     */
    private final java.util.concurrent.atomic.AtomicLongArray pins;
    /** The objects using this one (created from it, or a QP using a CQ, ...), with how many times each does. */
    private final java.util.concurrent.ConcurrentHashMap<NativeResource, Integer> dependents =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Where this object was created (its caller's frames), or null when creation tracking is off. */
    private final StackTraceElement[] createdAt;
    private volatile boolean closeWhenIdle;

    /** Shared with the cleaner, which must not reach the resource itself. */
    private static final class Leak implements Runnable {
        final AtomicInteger users = new AtomicInteger();
        final String description;
        final StackTraceElement[] createdAt;

        Leak(String description, StackTraceElement[] createdAt) {
            this.description = description;
            this.createdAt = createdAt;
        }

        @Override
        public void run() {
            if (users.get() != CLOSED) {
                LeakDetection.report("LEAK: " + description + (createdAt != null ? " created at " + site(createdAt)
                        : " (-D" + LeakDetection.PROPERTY + "=paranoid says where it was created)")
                        + " was garbage-collected without close(); its native resources stay allocated until the"
                        + " process exits", createdAt != null ? new CreationSite(description + " was created here",
                                createdAt) : null);
            }
        }
    }

    /** How many stripes {@link #pins} has (a power of two), and how far apart they are. */
    static final int STRIPES = 8;
    static final int PAD = 16;
    private static final AtomicInteger NEXT_STRIPE = new AtomicInteger();

    NativeResource(String description, NativeResource parent) {
        this(description, parent, false);
    }

    /**
     * @param pinnable whether posted work requests pin this object (regions, address handles): their pins are
     *                 then counted on stripes
     */
    NativeResource(String description, NativeResource parent, boolean pinnable) {
        this.pins = pinnable ? new java.util.concurrent.atomic.AtomicLongArray(STRIPES * PAD) : null;
        this.description = description;
        this.parent = parent;
        LeakDetection.Level detection = LeakDetection.level();
        this.createdAt = detection == LeakDetection.Level.PARANOID ? creationSite() : null;
        this.leak = new Leak(description, createdAt);
        if (parent != null) {
            parent.addDependent(this);
        }
        if (detection != LeakDetection.Level.DISABLED) {
            CLEANER.register(this, leak);
        }
    }

    /** Where this object was created (its caller's frames), or null unless created at level PARANOID. */
    final StackTraceElement[] createdAt() {
        return createdAt;
    }

    /** The caller's frames: the stack without rdma4j's own frames and the constructors of its resources. */
    private static StackTraceElement[] creationSite() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> frames
                .dropWhile(NativeResource::isLibraryFrame)
                .map(StackWalker.StackFrame::toStackTraceElement)
                .toArray(StackTraceElement[]::new));
    }

    private static boolean isLibraryFrame(StackWalker.StackFrame f) {
        Class<?> c = f.getDeclaringClass();
        if (NativeResource.class.isAssignableFrom(c) && f.getMethodName().equals("<init>")) {
            return true; // a resource's constructor, also a subclass of a user's or a test's
        }
        return LIBRARY != null && LIBRARY.equals(location(c));
    }

    private static java.net.URL location(Class<?> c) {
        java.security.CodeSource cs = c.getProtectionDomain().getCodeSource();
        return cs == null ? null : cs.getLocation();
    }

    /** The first caller frame, as {@code class.method(File.java:line)}. */
    private static String site(StackTraceElement[] frames) {
        if (frames.length == 0) {
            return "(no caller frame)";
        }
        StackTraceElement e = frames[0];
        return e.getClassName() + "." + e.getMethodName() + "(" + (e.getFileName() != null ? e.getFileName() + ":"
                + e.getLineNumber() : "Unknown Source") + ")";
    }

    /** The stack trace of a creation site, attached to a refused close's exception (no stack of its own). */
    private static final class CreationSite extends Throwable {
        private static final long serialVersionUID = 1L;

        CreationSite(String message, StackTraceElement[] frames) {
            super(message, null, false, true);
            setStackTrace(frames);
        }
    }

    /**
     * {@code user} depends on this object until {@link #removeDependent}: created from it, or built on it (a
     * queue pair on its CQs and SRQ, a CQ on its channel). Counted like a child; named by a refused close.
     *
     * @throws IllegalStateException if closed or closing
     */
    final void addDependent(NativeResource user) {
        acquire(true);
        dependents.merge(user, 1, Integer::sum);
    }

    /** Ends a dependency {@link #addDependent} began. */
    final void removeDependent(NativeResource user) {
        dependents.computeIfPresent(user, (u, n) -> n == 1 ? null : n - 1);
        release(true);
    }

    /** The objects depending on this one now (a snapshot). */
    final java.util.List<NativeResource> dependents() {
        return java.util.List.copyOf(dependents.keySet());
    }

    /** Dependents and posted work requests using this object now. */
    final int childCount() {
        return children.get() + (int) pinCount();
    }

    /**
     * A stripe for a new work queue's pins ({@link #pin(int)}), round robin: queues created one after another
     * count on different stripes, so their pins do not contend.
     */
    static int pinStripe() {
        return NEXT_STRIPE.getAndIncrement() & (STRIPES - 1);
    }

    /**
     * A posted work request of the queue counting on {@code stripe} starts using this object: until
     * {@link #unpin(int)}, {@code close()} is refused. One atomic increment on the queue's own stripe; the
     * object's shared counter is only read.
     *
     * @throws IllegalStateException if closed or closing
     */
    final void pin(int stripe) {
        java.util.concurrent.atomic.AtomicLongArray p = pins;
        if (p == null) {
            acquire(true);
            return;
        }
        int i = stripe * PAD;
        p.getAndIncrement(i);
        // Dekker with close(): the increment comes before this read, close's CAS to CLOSING before its sum of
        // the stripes; so either this sees CLOSING (and backs off) or that close sees the pin (and is refused).
        int n = leak.users.get();
        if (n == CLOSED || (n & CLOSING) != 0) {
            p.getAndDecrement(i);
            throw new IllegalStateException(description + (n == CLOSED ? " is closed" : " is closing"));
        }
    }

    /** A request that {@link #pin(int)} counted on {@code stripe} is done with this object. */
    final void unpin(int stripe) {
        java.util.concurrent.atomic.AtomicLongArray p = pins;
        if (p == null) {
            release(true);
            return;
        }
        p.getAndDecrement(stripe * PAD);
        if (closeWhenIdle) {
            closeIfIdle();
        }
    }

    /** Posted work requests pinning this object now (the sum of the stripes). */
    final long pinCount() {
        java.util.concurrent.atomic.AtomicLongArray p = pins;
        if (p == null) {
            return 0;
        }
        long sum = 0;
        for (int i = 0; i < STRIPES; i++) {
            sum += p.get(i * PAD);
        }
        return sum;
    }

    /** How this object is named in messages about it; {@link #description()} plus what identifies it. */
    String label() {
        return description;
    }

    /** What this is, for messages: e.g. {@code "Context(rxe0)"}. */
    final String description() {
        return description;
    }

    /**
     * Marks a call in progress (or a new child); the handle cannot be destroyed until {@link #release}.
     *
     * @throws IllegalStateException if closed
     */
    final void acquire(boolean child) {
        AtomicInteger users = leak.users;
        for (;;) {
            int n = users.get();
            if (n == CLOSED) {
                throw new IllegalStateException(description + " is closed");
            }
            if ((n & CLOSING) != 0) {
                throw new IllegalStateException(description + " is closing");
            }
            if (users.compareAndSet(n, n + 1)) {
                if (child) {
                    children.incrementAndGet();
                }
                return;
            }
        }
    }

    /**
     * The exception for a call after the close, with {@link #acquire}'s message: for the hot paths (poll, post),
     * which instead of {@code acquire}/{@code release} check a flag under the lock their {@link #destroy} takes
     * first, so that a poll or post costs no atomic read-modify-write of the shared life-cycle counter.
     */
    final IllegalStateException closedError() {
        return new IllegalStateException(description + " is closed");
    }

    /** Ends a call in progress, or a child's life. */
    final void release(boolean child) {
        int kids = child ? children.decrementAndGet() : -1;
        leak.users.decrementAndGet();
        if (kids == 0 && closeWhenIdle) {
            closeIfIdle();
        }
    }

    /**
     * Closes now if nothing depends on this object any more, or else as soon as the last object
     * created from it (or the last posted work request using it) is gone. For owners that cannot know
     * when their users are done, e.g. an engine's completion channels or an rdma_cm channel's contexts.
     */
    public final void closeWhenIdle() {
        closeWhenIdle = true;
        closeIfIdle();
    }

    private void closeIfIdle() {
        if (children.get() == 0 && pinCount() == 0) {
            try {
                close();
            } catch (IllegalStateException raced) {
                // a new child appeared meanwhile: its release will try again
            }
        }
    }

    /** @throws IllegalStateException if closed or closing */
    final void ensureOpen() {
        int n = leak.users.get();
        if (n == CLOSED) {
            throw new IllegalStateException(description + " is closed");
        }
        if ((n & CLOSING) != 0) {
            throw new IllegalStateException(description + " is closing");
        }
    }

    /**
     * Whether {@link #close()} has completed.
     *
     * @return {@code true} once closed
     */
    public final boolean isClosed() {
        return leak.users.get() == CLOSED;
    }

    /**
     * Destroys the native object. Idempotent: a call after the close returns at once, a call during
     * another thread's close waits for it. First refuses new calls ({@code "... is closing"}), then waits
     * for the calls in progress on other threads to return, then destroys.
     *
     * @throws IllegalStateException if children (objects created from this one, or posted work requests)
     *                               still use it, naming the objects and counting the posted work requests
     *                               apart; the object then stays open and usable; or if called from
     *                               within a call of this object that the close would wait for (e.g. a
     *                               context closed from its own async-event listener)
     */
    @Override
    public final void close() {
        refuseReentrantClose();
        closeOwnedIdleDependents();
        AtomicInteger users = leak.users;
        int spins = 0;
        for (;;) { // announce the close: from here on acquire() refuses
            int n = users.get();
            if (n == CLOSED) {
                return;
            }
            if ((n & CLOSING) != 0) {
                spins = dev.rdma4j.internal.BackOff.step(spins); // another thread is closing: wait for its outcome
                continue;
            }
            int kids = children.get();
            if (kids > 0 || pinCount() > 0) {
                throw stillUsed(kids);
            }
            if (users.compareAndSet(n, n | CLOSING)) {
                if (pinCount() > 0) { // a request was posted as the close began: give up the close, reopened
                    users.getAndAdd(-CLOSING);
                    throw stillUsed(children.get());
                }
                break;
            }
        }
        spins = 0;
        for (;;) { // only calls that began before the announcement remain, and they are short
            int n = users.get();
            if (n == CLOSING && users.compareAndSet(CLOSING, CLOSED)) {
                break;
            }
            int kids = children.get();
            if (kids > 0) { // a child was being created as the close began: give up the close, reopened
                users.getAndAdd(-CLOSING);
                throw stillUsed(kids);
            }
            spins = dev.rdma4j.internal.BackOff.step(spins);
        }
        try {
            destroy();
        } finally {
            if (parent != null) {
                parent.removeDependent(this);
            }
        }
    }

    /**
     * Names what keeps this object open: its dependents (with where each was created, when tracked) and, counted
     * apart, the posted work requests pinning it.
     */
    private IllegalStateException stillUsed(int kids) {
        java.util.List<java.util.Map.Entry<NativeResource, Integer>> open = java.util.List.copyOf(dependents.entrySet());
        int uses = 0;
        for (var e : open) {
            uses += e.getValue();
        }
        long pins = Math.max(0, kids - uses) + pinCount();
        StringBuilder m = new StringBuilder("cannot close ").append(label()).append(": ");
        java.util.List<CreationSite> sites = new java.util.ArrayList<>();
        if (open.isEmpty() && pins == 0) { // they went meanwhile
            m.append("still used by ").append(kids).append(" open object(s) or posted work request(s)");
        }
        if (!open.isEmpty()) {
            m.append("still used by ").append(open.size()).append(" open object(s): ");
            boolean tracked = false;
            for (int k = 0; k < open.size() && k < NAMED; k++) {
                NativeResource d = open.get(k).getKey();
                m.append(k > 0 ? ", " : "").append(d.label());
                if (d.createdAt != null) {
                    tracked = true;
                    m.append(" created at ").append(site(d.createdAt));
                    sites.add(new CreationSite(d.label() + " was created here", d.createdAt));
                }
            }
            if (open.size() > NAMED) {
                m.append(", and ").append(open.size() - NAMED).append(" more");
            }
            m.append(tracked ? "" : " (run with -D" + LeakDetection.PROPERTY
                    + "=paranoid to see where each was created)");
        }
        if (pins > 0) {
            m.append(open.isEmpty() ? "" : "; and ").append("pinned by ").append(pins)
                    .append(" posted work request(s) that have not completed");
        }
        if (open.isEmpty() && pins == 0) {
            m.append("; close them (or let the work complete) first");
        } else if (pins == 0) {
            m.append("; close them first");
        } else if (open.isEmpty()) {
            m.append("; poll their completions (or reset or close their queue pair) first");
        } else {
            m.append("; close them, and poll the completions (or reset or close the queue pair) first");
        }
        IllegalStateException e = new IllegalStateException(m.toString());
        sites.forEach(e::addSuppressed);
        return e;
    }

    /**
     * Before a close: closes dependents this object may close on its owner's behalf, when nothing else keeps it
     * open (a context closes the idle completion channels of an engine). None by default.
     */
    void closeOwnedIdleDependents() {
    }


    /**
     * For a constructor whose verb failed: marks this closed without {@link #destroy()} and gives the
     * parent its child back.
     */
    final void abandon() {
        leak.users.set(CLOSED);
        if (parent != null) {
            parent.removeDependent(this);
        }
    }

    /**
     * Throws when the calling thread is itself inside a call of this object that {@link #close()} would wait
     * for (a listener closing the object that is delivering to it), which would never return. None by default.
     */
    void refuseReentrantClose() {
    }

    /** Frees the native object; called exactly once. */
    abstract void destroy();

    @Override
    public String toString() {
        return description + (isClosed() ? " (closed)" : "");
    }
}
