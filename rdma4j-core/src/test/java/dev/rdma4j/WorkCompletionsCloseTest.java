package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;

/** Issue 12: {@code WorkCompletions.close()} threw "Already closed" when called twice or by 8 threads at once. */
class WorkCompletionsCloseTest {
    @RepeatedTest(20)
    void closeIsIdempotentAlsoFromEightThreadsAtOnce() throws Exception {
        WorkCompletions wcs = new WorkCompletions(16);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    wcs.close();
                } catch (Throwable e) {
                    failures.incrementAndGet();
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        wcs.close();
        assertThat(failures.get()).isZero();
    }
}
