package dev.rdma4j.bench;

import static java.lang.constant.ConstantDescs.CD_Object;
import static java.lang.constant.ConstantDescs.CD_boolean;
import static java.lang.constant.ConstantDescs.CD_int;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;
import static java.lang.constant.ConstantDescs.INIT_NAME;
import static java.lang.constant.ConstantDescs.MTD_void;
import static java.lang.invoke.MethodType.methodType;

import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.MemoryRegion;
import dev.rdma4j.QueuePair;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.ffi.Native;
import java.lang.classfile.ClassFile;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.AccessFlag;
import java.util.function.IntFunction;

/**
 * The benchmarks' one door into rdma4j-core's package-private types and members, which the host benchmarks measure
 * ({@code WorkRing}, {@code SlotTable}, {@code WorkRequestIds} and its {@code Owner}s) or need to set up without a
 * device ({@code MemoryRegion.unregistered}, {@code WorkCompletions}' setters, the native handles of a context, a
 * CQ and a QP). The benchmarks live in {@code dev.rdma4j.bench}, no package of the core's (checked by
 * {@code NoSplitPackageTest}), and reach them here through method handles from
 * {@link MethodHandles#privateLookupIn private lookups} into the core's classes.
 *
 * <p>Class path only: the bench jar is one shaded jar on the class path, where the core is part of the unnamed module
 * and open to it. With the core as the module {@code dev.rdma4j} (which opens nothing) this class fails to
 * initialise. Benchmark code only: nothing here is API, and a member the core renames or retypes fails here at class
 * initialisation with its name ({@code InternalsTest} initialises it on the host).
 *
 * <p>The members a benchmark measures are called through {@code static final} handles with {@code invokeExact},
 * which the JIT treats as constants and inlines like the direct calls the benchmarks made when they sat in the
 * core's package: the measured path is the core's own code. A receiver of a package-private type is an
 * {@code Object} here and the handle casts it back ({@link MethodHandle#asType asType}): a type check the direct
 * calls did not have, the one thing this adds to a measured path. The owner a benchmark registers in
 * {@code WorkRequestIds} ({@link #register}) is an object of a small class defined at class initialisation as a
 * hidden class of the core's package: {@code Owner} is a package-private interface, which no class outside the
 * package can implement; the core's {@code WorkRequestIds.owner} finds it by token and the completion calls it
 * through {@code invokeinterface}, as the poller calls a queue pair's.
 *
 * <p>Threading: stateless (constants); each method has the threading of the member it reaches, e.g. a
 * {@code WorkRing} has one producer and one consumer at a time, which the benchmarks confine to one thread.
 */
final class Internals {
    /** {@code WorkRequestIds.SEQ_MASK}: the sequence bits of rdma4j's wr_id (a constant, as in the core). */
    static final long SEQ_MASK;

    // set-up only
    private static final MethodHandle UNREGISTERED;
    private static final MethodHandle WCS_RECEIVE;
    private static final MethodHandle WCS_COUNT;
    private static final MethodHandle WCS_SEGMENT;
    private static final MethodHandle CONTEXT_HANDLE;
    private static final MethodHandle CQ_HANDLE;
    private static final MethodHandle QP_HANDLE;
    private static final MethodHandle NEW_RING;
    private static final MethodHandle NEW_TABLE;
    private static final MethodHandle REGISTER;
    private static final MethodHandle UNREGISTER;
    private static final MethodHandle NEW_OWNER;
    private static final MethodHandle RING_RELEASE_ALL;

    // measured
    private static final MethodHandle RING_CLAIM;
    private static final MethodHandle RING_PIN;
    private static final MethodHandle RING_PUBLISH;
    private static final MethodHandle RING_COMPLETE;
    private static final MethodHandle RING_OUTSTANDING;
    private static final MethodHandle RING_HEAD;
    private static final MethodHandle TABLE_CLAIM;
    private static final MethodHandle TABLE_PIN;
    private static final MethodHandle ENCODE;
    private static final MethodHandle OWNER;
    private static final MethodHandle IS_RECV;
    private static final MethodHandle SEQ;
    private static final MethodHandle OWNER_COMPLETE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            Class<?> ring = Class.forName("dev.rdma4j.WorkRing");
            Class<?> table = Class.forName("dev.rdma4j.SlotTable");
            Class<?> ids = Class.forName("dev.rdma4j.WorkRequestIds");
            Class<?> owner = Class.forName("dev.rdma4j.WorkRequestIds$Owner");
            Class<?> resource = Class.forName("dev.rdma4j.NativeResource");
            MethodHandles.Lookup core = MethodHandles.privateLookupIn(ring, lookup); // package access to dev.rdma4j

            SEQ_MASK = (long) core.findStaticGetter(ids, "SEQ_MASK", long.class).invokeExact();
            UNREGISTERED = core.findStatic(MemoryRegion.class, "unregistered",
                    methodType(MemoryRegion.class, MemorySegment.class, int.class, int.class));
            WCS_RECEIVE = core.findVirtual(WorkCompletions.class, "receive",
                    methodType(void.class, int.class, boolean.class));
            WCS_COUNT = core.findVirtual(WorkCompletions.class, "count", methodType(void.class, int.class));
            WCS_SEGMENT = core.findVirtual(WorkCompletions.class, "segment", methodType(MemorySegment.class));
            CONTEXT_HANDLE = core.findVirtual(Context.class, "handle", methodType(MemorySegment.class));
            CQ_HANDLE = core.findVirtual(CompletionQueue.class, "handle", methodType(MemorySegment.class));
            QP_HANDLE = core.findGetter(QueuePair.class, "handle", MemorySegment.class);
            NEW_RING = core.findConstructor(ring, methodType(void.class, int.class, int.class))
                    .asType(methodType(Object.class, int.class, int.class));
            NEW_TABLE = core.findConstructor(table, methodType(void.class, int.class, int.class))
                    .asType(methodType(Object.class, int.class, int.class));
            REGISTER = core.findStatic(ids, "register", methodType(int.class, IntFunction.class));
            UNREGISTER = core.findStatic(ids, "unregister", methodType(void.class, int.class));
            NEW_OWNER = defineOwner(core, ring, table, owner);
            RING_RELEASE_ALL = core.findVirtual(ring, "releaseAll", methodType(void.class))
                    .asType(methodType(void.class, Object.class));

            RING_CLAIM = core.findVirtual(ring, "claim",
                    methodType(long.class, long.class, MemoryRegion.class, long.class))
                    .asType(methodType(long.class, Object.class, long.class, MemoryRegion.class, long.class));
            RING_PIN = core.findVirtual(ring, "pin", methodType(void.class, long.class, resource))
                    .asType(methodType(void.class, Object.class, long.class, MemoryRegion.class));
            RING_PUBLISH = core.findStatic(ring, "publish", methodType(void.class));
            RING_COMPLETE = core.findVirtual(ring, "complete",
                    methodType(long.class, long.class, WorkCompletions.class, int.class))
                    .asType(methodType(long.class, Object.class, long.class, WorkCompletions.class, int.class));
            RING_OUTSTANDING = core.findVirtual(ring, "outstanding", methodType(int.class))
                    .asType(methodType(int.class, Object.class));
            RING_HEAD = core.findVirtual(ring, "head", methodType(long.class))
                    .asType(methodType(long.class, Object.class));
            TABLE_CLAIM = core.findVirtual(table, "claim",
                    methodType(long.class, long.class, MemoryRegion.class, long.class))
                    .asType(methodType(long.class, Object.class, long.class, MemoryRegion.class, long.class));
            TABLE_PIN = core.findVirtual(table, "pin", methodType(void.class, long.class, resource))
                    .asType(methodType(void.class, Object.class, long.class, MemoryRegion.class));
            ENCODE = core.findStatic(ids, "encode", methodType(long.class, int.class, boolean.class, long.class));
            OWNER = core.findStatic(ids, "owner", methodType(owner, long.class))
                    .asType(methodType(Object.class, long.class));
            IS_RECV = core.findStatic(ids, "isRecv", methodType(boolean.class, long.class));
            SEQ = core.findStatic(ids, "seq", methodType(long.class, long.class));
            OWNER_COMPLETE = core.findVirtual(owner, "complete",
                    methodType(long.class, boolean.class, long.class, WorkCompletions.class, int.class))
                    .asType(methodType(long.class, Object.class, boolean.class, long.class, WorkCompletions.class,
                            int.class));
        } catch (Throwable e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Internals() {
    }

    /**
     * Defines, in the core's package ({@code core}'s lookup class's), the hidden class of the benchmarks' queue owner,
     * the class a benchmark of the core's package would have written:
     *
     * <pre>{@code
     * final class BenchOwner implements WorkRequestIds.Owner {
     *     final WorkRing ring; final SlotTable table; final boolean srq; final int token;
     *     public long complete(boolean recv, long seq, WorkCompletions w, int i) {
     *         return srq ? table.complete(seq, w, i) : ring.complete(seq, recv ? w : null, i);
     *     }
     *     public int token() { return token; }
     *     public QpDriver driver() { return null; }
     * }}</pre>
     *
     * @return its constructor, {@code (Object ring, Object table, boolean srq, int token)Object}
     */
    private static MethodHandle defineOwner(MethodHandles.Lookup core, Class<?> ring, Class<?> table, Class<?> owner)
            throws ReflectiveOperationException {
        ClassDesc self = ClassDesc.of(core.lookupClass().getPackageName() + ".BenchOwner");
        ClassDesc ringD = ring.describeConstable().orElseThrow();
        ClassDesc tableD = table.describeConstable().orElseThrow();
        ClassDesc wcsD = ClassDesc.of(WorkCompletions.class.getName());
        ClassDesc driverD = ClassDesc.of("dev.rdma4j.internal.QpDriver");
        MethodTypeDesc complete = MethodTypeDesc.of(CD_long, CD_long, wcsD, CD_int);
        int field = ClassFile.ACC_FINAL;
        byte[] bytes = ClassFile.of().build(self, c -> c
                .withFlags(AccessFlag.FINAL, AccessFlag.SUPER)
                .withInterfaceSymbols(owner.describeConstable().orElseThrow())
                .withField("ring", ringD, field)
                .withField("table", tableD, field)
                .withField("srq", CD_boolean, field)
                .withField("token", CD_int, field)
                .withMethodBody(INIT_NAME, MethodTypeDesc.of(CD_void, ringD, tableD, CD_boolean, CD_int), 0, b -> b
                        .aload(0).invokespecial(CD_Object, INIT_NAME, MTD_void)
                        .aload(0).aload(1).putfield(self, "ring", ringD)
                        .aload(0).aload(2).putfield(self, "table", tableD)
                        .aload(0).iload(3).putfield(self, "srq", CD_boolean)
                        .aload(0).iload(4).putfield(self, "token", CD_int)
                        .return_())
                .withMethodBody("complete", MethodTypeDesc.of(CD_long, CD_boolean, CD_long, wcsD, CD_int),
                        ClassFile.ACC_PUBLIC, b -> {
                            // locals: this 0, recv 1, seq 2-3, w 4, i 5
                            var ringPath = b.newLabel();
                            var noWcs = b.newLabel();
                            var call = b.newLabel();
                            b.aload(0).getfield(self, "srq", CD_boolean).ifeq(ringPath)
                                    .aload(0).getfield(self, "table", tableD).lload(2).aload(4).iload(5)
                                    .invokevirtual(tableD, "complete", complete).lreturn()
                                    .labelBinding(ringPath)
                                    .aload(0).getfield(self, "ring", ringD).lload(2).iload(1).ifeq(noWcs)
                                    .aload(4).goto_(call)
                                    .labelBinding(noWcs).aconst_null()
                                    .labelBinding(call).iload(5)
                                    .invokevirtual(ringD, "complete", complete).lreturn();
                        })
                .withMethodBody("token", MethodTypeDesc.of(CD_int), ClassFile.ACC_PUBLIC, b -> b
                        .aload(0).getfield(self, "token", CD_int).ireturn())
                .withMethodBody("driver", MethodTypeDesc.of(driverD), ClassFile.ACC_PUBLIC, b -> b
                        .aconst_null().areturn()));
        MethodHandles.Lookup hidden = core.defineHiddenClass(bytes, true);
        return hidden.findConstructor(hidden.lookupClass(), methodType(void.class, ring, table, boolean.class,
                int.class)).asType(methodType(Object.class, Object.class, Object.class, boolean.class, int.class));
    }

    // ---- set-up (not measured: boxed through invokeWithArguments) ----

    /** {@code MemoryRegion.unregistered}: a region without a device (made-up keys; closing it frees nothing). */
    static MemoryRegion unregisteredRegion(MemorySegment segment, int lkey, int rkey) {
        return (MemoryRegion) setUp(UNREGISTERED, segment, lkey, rkey);
    }

    /** {@code WorkCompletions.receive(i, receive)}: completion {@code i} is of a receive (as a poll marks it). */
    static void receive(WorkCompletions wcs, int i, boolean receive) {
        setUp(WCS_RECEIVE, wcs, i, receive);
    }

    /** {@code WorkCompletions.count(n)}: the batch holds {@code n} completions (as a poll sets it). */
    static void count(WorkCompletions wcs, int n) {
        setUp(WCS_COUNT, wcs, n);
    }

    /** {@code WorkCompletions.segment()}: the native {@code ibv_wc} array. */
    static MemorySegment segment(WorkCompletions wcs) {
        return (MemorySegment) setUp(WCS_SEGMENT, wcs);
    }

    /** The {@code struct ibv_context *}. */
    static MemorySegment handle(Context ctx) {
        return (MemorySegment) setUp(CONTEXT_HANDLE, ctx);
    }

    /** The {@code struct ibv_cq *}. */
    static MemorySegment handle(CompletionQueue cq) {
        return (MemorySegment) setUp(CQ_HANDLE, cq);
    }

    /** The {@code struct ibv_qp *} (its private field {@code handle}). */
    static MemorySegment handle(QueuePair qp) {
        return (MemorySegment) setUp(QP_HANDLE, qp);
    }

    /** {@code new WorkRing(capacity, refsPerSlot)}: a queue pair's in-order ring. */
    static Object newWorkRing(int capacity, int refsPerSlot) {
        return setUp(NEW_RING, capacity, refsPerSlot);
    }

    /** {@code new SlotTable(capacity, refsPerSlot)}: a shared receive queue's any-order table. */
    static Object newSlotTable(int capacity, int refsPerSlot) {
        return setUp(NEW_TABLE, capacity, refsPerSlot);
    }

    /**
     * {@code WorkRequestIds.register} of an owner whose completions go to {@code table} ({@code srq}) or else to
     * {@code ring}: see {@link #defineOwner}.
     *
     * @return its token
     */
    static int register(Object ring, Object table, boolean srq) {
        IntFunction<Object> owner = token -> setUp(NEW_OWNER, ring, table, srq, token);
        return (int) setUp(REGISTER, owner);
    }

    /** {@code WorkRequestIds.unregister}. */
    static void unregister(int token) {
        setUp(UNREGISTER, token);
    }

    /** {@code WorkRing.releaseAll}: nothing outstanding will complete any more. */
    static void releaseAll(Object ring) {
        setUp(RING_RELEASE_ALL, ring);
    }

    private static Object setUp(MethodHandle handle, Object... args) {
        try {
            return handle.invokeWithArguments(args);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    // ---- measured ----

    /** {@code WorkRing.claim}. */
    static long ringClaim(Object ring, long userWrId, MemoryRegion region, long offset) {
        try {
            return (long) RING_CLAIM.invokeExact(ring, userWrId, region, offset);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRing.pin}. */
    static void ringPin(Object ring, long seq, MemoryRegion region) {
        try {
            RING_PIN.invokeExact(ring, seq, region);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRing.publish}: the release fence before the device may complete the claimed slots. */
    static void publish() {
        try {
            RING_PUBLISH.invokeExact();
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRing.complete}. */
    static long ringComplete(Object ring, long seq39, WorkCompletions wcs, int i) {
        try {
            return (long) RING_COMPLETE.invokeExact(ring, seq39, wcs, i);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRing.outstanding}. */
    static int outstanding(Object ring) {
        try {
            return (int) RING_OUTSTANDING.invokeExact(ring);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRing.head}. */
    static long head(Object ring) {
        try {
            return (long) RING_HEAD.invokeExact(ring);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code SlotTable.claim}. */
    static long tableClaim(Object table, long userWrId, MemoryRegion region, long offset) {
        try {
            return (long) TABLE_CLAIM.invokeExact(table, userWrId, region, offset);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code SlotTable.pin}. */
    static void tablePin(Object table, long seq, MemoryRegion region) {
        try {
            TABLE_PIN.invokeExact(table, seq, region);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRequestIds.encode}: rdma4j's wr_id. */
    static long encode(int token, boolean recv, long seq) {
        try {
            return (long) ENCODE.invokeExact(token, recv, seq);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRequestIds.owner}: the live owner of a wr_id, or null. */
    static Object owner(long wrId) {
        try {
            return (Object) OWNER.invokeExact(wrId);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRequestIds.isRecv}. */
    static boolean isRecv(long wrId) {
        try {
            return (boolean) IS_RECV.invokeExact(wrId);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRequestIds.seq}. */
    static long seq(long wrId) {
        try {
            return (long) SEQ.invokeExact(wrId);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code WorkRequestIds.Owner.complete} ({@code invokeinterface}). */
    static long complete(Object owner, boolean recv, long seq, WorkCompletions wcs, int i) {
        try {
            return (long) OWNER_COMPLETE.invokeExact(owner, recv, seq, wcs, i);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
