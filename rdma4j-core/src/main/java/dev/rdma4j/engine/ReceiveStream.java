package dev.rdma4j.engine;

import dev.rdma4j.MemoryRegion;
import dev.rdma4j.WorkCompletion;
import java.util.ArrayDeque;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;

/**
 * Incoming messages of an {@link AsyncQueuePair} as a {@link Flow.Publisher} for one subscriber.
 * The stream splits a region into {@code slots} equal slots and keeps each posted as a receive until a
 * message lands in it; a message is handed to the subscriber when it has demand, and its slot is
 * posted again when the subscriber {@link ReceivedMessage#release() releases} it. With no demand or
 * no releases, no receives are posted, and a reliable sender is held back by RNR retries: back-pressure
 * reaches the wire. A failed receive (e.g. the queue pair closed) ends the stream with
 * {@code onError(WorkRequestException)}; {@code cancel()} stops delivery (posted receives stay posted).
 *
 * <p>Threading: thread-safe as a {@link java.util.concurrent.Flow.Publisher}; the subscriber's {@code onNext}
 * runs on the engine thread and must not block.
 */
public final class ReceiveStream implements Flow.Publisher<ReceivedMessage> {
    private final AsyncQueuePair qp;
    private final MemoryRegion region;
    private final long offset;
    private final int slotSize;
    private final int slots;
    private final ArrayDeque<ReceivedMessage> ready = new ArrayDeque<>();
    private Flow.Subscriber<? super ReceivedMessage> subscriber;
    private long demand;
    private boolean done;
    private boolean delivering;

    ReceiveStream(AsyncQueuePair qp, MemoryRegion region, long offset, int slotSize, int slots) {
        if (slots < 1 || slotSize < 1) {
            throw new IllegalArgumentException("a receive stream needs at least one slot of at least one byte");
        }
        region.remote(offset, (long) slotSize * slots); // bounds check
        this.qp = qp;
        this.region = region;
        this.offset = offset;
        this.slotSize = slotSize;
        this.slots = slots;
    }

    /**
     * Subscribes the single subscriber and posts every slot.
     *
     * @param s the subscriber
     */
    @Override
    public void subscribe(Flow.Subscriber<? super ReceivedMessage> s) {
        synchronized (this) {
            if (subscriber != null) {
                s.onSubscribe(new Flow.Subscription() {
                    @Override
                    public void request(long n) {
                    }

                    @Override
                    public void cancel() {
                    }
                });
                s.onError(new IllegalStateException("a receive stream has one subscriber"));
                return;
            }
            subscriber = s;
        }
        s.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
                if (n <= 0) {
                    fail(new IllegalArgumentException("request(" + n + ") (reactive streams rule 3.9)"));
                    return;
                }
                synchronized (ReceiveStream.this) {
                    demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
                }
                deliver();
            }

            @Override
            public void cancel() {
                synchronized (ReceiveStream.this) {
                    done = true;
                    ready.clear();
                }
            }
        });
        for (int i = 0; i < slots; i++) {
            repost(i);
        }
    }

    void repost(int slot) {
        synchronized (this) {
            if (done) {
                return;
            }
        }
        qp.receiveAsync(region, offset + (long) slot * slotSize, slotSize).whenComplete((wc, error) -> {
            if (error != null) {
                fail(error instanceof CompletionException c && c.getCause() != null ? c.getCause() : error);
            } else {
                arrived(slot, wc);
            }
        });
    }

    private void arrived(int slot, WorkCompletion wc) {
        ReceivedMessage m = new ReceivedMessage(this, slot,
                region.segment().asSlice(offset + (long) slot * slotSize, wc.byteLength()), wc);
        synchronized (this) {
            if (done) {
                return;
            }
            ready.add(m);
        }
        deliver();
    }

    /** Hands ready messages to the subscriber while it has demand; one deliverer at a time, in order. */
    private void deliver() {
        for (;;) {
            ReceivedMessage m;
            Flow.Subscriber<? super ReceivedMessage> s;
            synchronized (this) {
                if (delivering || done || demand == 0 || ready.isEmpty()) {
                    return;
                }
                delivering = true;
                demand--;
                m = ready.poll();
                s = subscriber;
            }
            try {
                s.onNext(m);
            } finally {
                synchronized (this) {
                    delivering = false;
                }
            }
        }
    }

    private void fail(Throwable t) {
        Flow.Subscriber<? super ReceivedMessage> s;
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            s = subscriber;
        }
        if (s != null) {
            s.onError(t);
        }
    }
}
