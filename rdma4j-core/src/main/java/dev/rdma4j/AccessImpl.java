package dev.rdma4j;

import dev.rdma4j.internal.Access;
import java.lang.foreign.MemorySegment;

/** dev.rdma4j's side of {@link Access}. */
final class AccessImpl implements Access {
    static {
        Access.Holder.set(new AccessImpl());
    }

    private AccessImpl() {
    }

    @Override
    public Context borrowContext(MemorySegment ibvContext) throws VerbsException {
        return Context.borrow(ibvContext);
    }

    @Override
    public MemorySegment handle(ProtectionDomain pd) {
        return pd.handle();
    }

    @Override
    public QueuePair createQueuePair(QueuePair.Builder builder, QpVerbs verbs) throws VerbsException {
        return builder.build(verbs);
    }

    @Override
    public void drive(QueuePair qp, QpDriver driver) {
        qp.drive(driver);
    }

    @Override
    public void drive(CompletionQueue cq, Thread engineThread) {
        cq.drive(engineThread);
    }

    @Override
    public int pollForDriver(CompletionQueue cq, WorkCompletions wcs) throws VerbsException {
        return cq.pollForDriver(wcs);
    }

    @Override
    public int pollReadable(CompletionChannel ch, int ms, java.lang.foreign.MemorySegment pollfd) {
        return ch.pollReadable(ms, pollfd);
    }

    @Override
    public int epollCtl(CompletionChannel ch, int epfd, int op, long id, java.lang.foreign.MemorySegment scratch) {
        return ch.epollCtl(epfd, op, id, scratch);
    }

    @Override
    public QpDriver driver(WorkCompletions wcs, int i) {
        return wcs.driver(i);
    }

    @Override
    public void post(QueuePair qp, SendBatch batch) throws VerbsException {
        qp.post(batch, true);
    }

    @Override
    public void clearWrId(WorkCompletions wcs, int i) {
        wcs.clearWrId(i);
    }

    @Override
    public void postChain(QueuePair qp, SendBatch batch, long idBase) throws VerbsException {
        qp.post(batch, true, idBase);
    }

    @Override
    public boolean isSignaled(SendBatch batch, int i) {
        return batch.isSignaled(i);
    }

    @Override
    public void post(QueuePair qp, ReceiveBatch batch) throws VerbsException {
        qp.post(batch, true);
    }

    @Override
    public void stateChanged(QueuePair qp, QpState state) {
        qp.stateChanged(state);
    }
}
