package dev.rdma4j;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A resource's listeners for its asynchronous events ({@code ibv_get_async_event}), and the future of the next one.
 *
 * <p>Threading: thread-safe; the events are dispatched on the thread running {@link Context#processAsyncEvents()}.
 */
final class EventListeners {
    private final CopyOnWriteArrayList<Consumer<AsyncEvent>> listeners = new CopyOnWriteArrayList<>();

    void add(Consumer<AsyncEvent> listener) {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /** Completes with the next event: a listener that removes itself. */
    CompletableFuture<AsyncEvent> next() {
        CompletableFuture<AsyncEvent> f = new CompletableFuture<>();
        listeners.add(new Consumer<>() {
            @Override
            public void accept(AsyncEvent e) {
                listeners.remove(this);
                f.complete(e);
            }
        });
        return f;
    }

    void dispatch(Context context, AsyncEvent e) {
        context.notifyListeners(listeners, e);
    }
}
