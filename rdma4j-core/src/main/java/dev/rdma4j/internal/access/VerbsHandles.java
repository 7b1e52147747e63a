package dev.rdma4j.internal.access;

import static java.lang.invoke.MethodType.methodType;

import dev.rdma4j.CompletionChannel;
import dev.rdma4j.CompletionQueue;
import dev.rdma4j.Context;
import dev.rdma4j.ProtectionDomain;
import dev.rdma4j.QpState;
import dev.rdma4j.QueuePair;
import dev.rdma4j.QueuePairBuilder;
import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.SendBatch;
import dev.rdma4j.SharedReceiveQueue;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import dev.rdma4j.internal.QpDriver;
import dev.rdma4j.internal.QpVerbs;
import dev.rdma4j.internal.ffi.Native;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * {@link Access} over method handles to the verbs' package-private members: static final handles, which the JIT
 * treats as constants and inlines like direct calls. A member that is renamed or retyped fails here, at class
 * initialisation, with the member's name ({@code AccessBridgeTest} initialises it on the host). The targets throw
 * nothing checked but {@code VerbsException}; anything else a handle throws is rethrown unchecked.
 */
final class VerbsHandles implements Access {
    static final VerbsHandles INSTANCE = new VerbsHandles();

    private static final MethodHandle BORROW;
    private static final MethodHandle PD_HANDLE;
    private static final MethodHandle BUILD;
    private static final MethodHandle DRIVE_QP;
    private static final MethodHandle DRIVE_CQ;
    private static final MethodHandle POLL_FOR_DRIVER;
    private static final MethodHandle SENDS_POSTED;
    private static final MethodHandle POLL_READABLE;
    private static final MethodHandle EPOLL_CTL;
    private static final MethodHandle NEXT_EVENT;
    private static final MethodHandle DRIVER;
    private static final MethodHandle POST_SEND;
    private static final MethodHandle POST_RECV;
    private static final MethodHandle CLEAR_WR_ID;
    private static final MethodHandle IS_SIGNALED;
    private static final MethodHandle POSTED;
    private static final MethodHandle STATE_CHANGED;
    private static final MethodHandle RENAME_OWNER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(QueuePair.class, MethodHandles.lookup());
            BORROW = l.findStatic(Context.class, "borrow", methodType(Context.class, MemorySegment.class));
            PD_HANDLE = l.findVirtual(ProtectionDomain.class, "handle", methodType(MemorySegment.class));
            BUILD = l.findVirtual(QueuePairBuilder.class, "build", methodType(QueuePair.class, QpVerbs.class));
            DRIVE_QP = l.findVirtual(QueuePair.class, "drive", methodType(void.class, QpDriver.class));
            DRIVE_CQ = l.findVirtual(CompletionQueue.class, "drive", methodType(void.class, Thread.class));
            POLL_FOR_DRIVER = l.findVirtual(CompletionQueue.class, "pollForDriver",
                    methodType(int.class, WorkCompletions.class));
            SENDS_POSTED = l.findVirtual(CompletionQueue.class, "sendsPosted", methodType(int.class));
            POLL_READABLE = l.findVirtual(CompletionChannel.class, "pollReadable",
                    methodType(int.class, int.class, MemorySegment.class));
            NEXT_EVENT = l.findVirtual(CompletionChannel.class, "nextEventForDriver",
                    methodType(CompletionQueue.class, boolean.class));
            EPOLL_CTL = l.findVirtual(CompletionChannel.class, "epollCtl",
                    methodType(int.class, int.class, int.class, long.class, MemorySegment.class));
            DRIVER = l.findVirtual(WorkCompletions.class, "driver", methodType(QpDriver.class, int.class));
            POST_SEND = l.findVirtual(QueuePair.class, "post", // (batch, byDriver, idBase; -1: the batch's ids)
                    methodType(void.class, SendBatch.class, boolean.class, long.class));
            POST_RECV = l.findVirtual(QueuePair.class, "post",
                    methodType(void.class, ReceiveBatch.class, boolean.class));
            CLEAR_WR_ID = l.findVirtual(WorkCompletions.class, "clearWrId", methodType(void.class, int.class));
            IS_SIGNALED = l.findVirtual(SendBatch.class, "isSignaled", methodType(boolean.class, int.class));
            POSTED = l.findVirtual(SendBatch.class, "posted", methodType(int.class));
            STATE_CHANGED = l.findVirtual(QueuePair.class, "stateChanged", methodType(void.class, QpState.class));
            RENAME_OWNER = l.findVirtual(SharedReceiveQueue.class, "renameOwner", methodType(void.class, String.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private VerbsHandles() {
    }

    @Override
    public void drive(QueuePair qp, QpDriver driver) {
        try {
            DRIVE_QP.invokeExact(qp, driver);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void drive(CompletionQueue cq, Thread engineThread) {
        try {
            DRIVE_CQ.invokeExact(cq, engineThread);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public CompletionQueue nextEvent(CompletionChannel ch, boolean readable) throws VerbsException {
        try {
            return (CompletionQueue) NEXT_EVENT.invokeExact(ch, readable);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public int sendsPosted(CompletionQueue cq) {
        try {
            return (int) SENDS_POSTED.invokeExact(cq);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public int pollForDriver(CompletionQueue cq, WorkCompletions wcs) throws VerbsException {
        try {
            return (int) POLL_FOR_DRIVER.invokeExact(cq, wcs);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public QpDriver driver(WorkCompletions wcs, int i) {
        try {
            return (QpDriver) DRIVER.invokeExact(wcs, i);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void post(QueuePair qp, SendBatch batch) throws VerbsException {
        try {
            POST_SEND.invokeExact(qp, batch, true, -1L);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void clearWrId(WorkCompletions wcs, int i) {
        try {
            CLEAR_WR_ID.invokeExact(wcs, i);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void post(QueuePair qp, ReceiveBatch batch) throws VerbsException {
        try {
            POST_RECV.invokeExact(qp, batch, true);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void postChain(QueuePair qp, SendBatch batch, long idBase) throws VerbsException {
        try {
            POST_SEND.invokeExact(qp, batch, true, idBase);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public int posted(SendBatch batch) {
        try {
            return (int) POSTED.invokeExact(batch);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public boolean isSignaled(SendBatch batch, int i) {
        try {
            return (boolean) IS_SIGNALED.invokeExact(batch, i);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public Context borrowContext(MemorySegment ibvContext) throws VerbsException {
        try {
            return (Context) BORROW.invokeExact(ibvContext);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public MemorySegment handle(ProtectionDomain pd) {
        try {
            return (MemorySegment) PD_HANDLE.invokeExact(pd);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public QueuePair createQueuePair(QueuePairBuilder builder, QpVerbs verbs) throws VerbsException {
        try {
            return (QueuePair) BUILD.invokeExact(builder, verbs);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void nameOwner(SharedReceiveQueue srq, String owner) {
        try {
            RENAME_OWNER.invokeExact(srq, owner);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public void stateChanged(QueuePair qp, QpState state) {
        try {
            STATE_CHANGED.invokeExact(qp, state);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public int pollReadable(CompletionChannel ch, int ms, MemorySegment pollfd) {
        try {
            return (int) POLL_READABLE.invokeExact(ch, ms, pollfd);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public int epollCtl(CompletionChannel ch, int epfd, int op, long id, MemorySegment scratch) {
        try {
            return (int) EPOLL_CTL.invokeExact(ch, epfd, op, id, scratch);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
