package dev.rdma4j.net;

import dev.rdma4j.internal.Timeouts;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The short path's waits for a future with a deadline, and its quiet closes.
 *
 * <p>Threading: stateless.
 */
final class Waits {
    private Waits() {
    }

    /**
     * Waits for {@code f}; at the deadline cancels it (a cancelled wait loses nothing: see deliver) and throws
     * {@code late.get()}.
     */
    static <T> T await(CompletableFuture<T> f, Duration timeout, String what,
            java.util.function.Supplier<IOException> late) throws IOException, InterruptedException {
        try {
            return f.get(Timeouts.nanos(timeout), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (f.cancel(false)) {
                throw late.get();
            }
            return await(f, timeout, what, late); // completed as it timed out
        } catch (InterruptedException e) {
            if (!f.cancel(false) && f.isDone() && !f.isCompletedExceptionally()) {
                Thread.currentThread().interrupt(); // completed as the caller was interrupted: keep both
                return f.resultNow();
            }
            throw e;
        } catch (CancellationException e) {
            throw new IOException(what + " was cancelled", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                // the future's exception was made on another thread: keep this caller's stack as well
                IOException mine = Inbox.copyOf(io);
                throw mine != null ? mine : io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(what + " failed", cause);
        }
    }

    static RuntimeException closeQuietly(AutoCloseable r, RuntimeException failure) {
        if (r == null) {
            return failure;
        }
        try {
            r.close();
            return failure;
        } catch (Exception e) {
            RuntimeException f = failure != null ? failure
                    : new IllegalStateException("closing an RDMA connection left something open");
            f.addSuppressed(e);
            return f;
        }
    }

}
