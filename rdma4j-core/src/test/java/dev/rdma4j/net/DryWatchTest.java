package dev.rdma4j.net;

import dev.rdma4j.testing.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Running dry is reported once per episode, as it starts, and counted; the episode ends when a buffer comes back, and
 * the state follows the count whatever the threads do.
 */
class DryWatchTest {
    private LogCapture log;

    @BeforeEach
    void capture() {
        log = LogCapture.of(DryWatch.LOGGER).quiet(); // the racing test reports many episodes: not to the console
    }

    @AfterEach
    void release() {
        log.close();
    }

    private List<LogRecord> warnings() {
        return log.records().stream().filter(r -> r.getLevel() == Level.WARNING).toList();
    }

    @Test
    void everyBufferLentIsOneEpisodeReportedOnceAndItEndsWhenOneComesBack() {
        long[] now = {0};
        DryWatch w = new DryWatch("the queue Q", "its senders wait", 3, () -> now[0]);
        w.lent();
        w.lent();
        assertThat(w.isDry()).isFalse();
        assertThat(warnings()).isEmpty();
        w.lent();
        assertThat(w.isDry()).isTrue();
        assertThat(w.episodes()).isEqualTo(1);
        assertThat(warnings()).singleElement().satisfies(r -> assertThat(r.getMessage())
                .contains("the queue Q ran dry").contains("all 3 receive buffers are lent")
                .contains("its senders wait").contains("close received messages to return their buffers"));
        w.returned();
        assertThat(w.isDry()).isFalse();
        now[0] += DryWatch.QUIET.toNanos();
        w.lent(); // a second episode, a quiet period later: reported
        assertThat(w.episodes()).isEqualTo(2);
        assertThat(warnings()).hasSize(2);
        w.returned();
        w.lent(); // a third at once: counted, not a WARNING yet
        w.returned();
        w.lent(); // and a fourth
        assertThat(w.episodes()).isEqualTo(4);
        assertThat(warnings()).hasSize(2);
        w.returned();
        now[0] += DryWatch.QUIET.toNanos();
        w.lent();
        assertThat(w.episodes()).isEqualTo(5);
        assertThat(warnings()).hasSize(3).last().satisfies(r -> assertThat(r.getMessage())
                .contains("(it ran dry 2 more times since the last report)"));
        w.returned();
        w.returned();
        assertThat(w.isDry()).isFalse();
        assertThat(w.lentNow()).isEqualTo(1);
        w.lent();
        assertThat(w.episodes()).as("2 of 3 lent: no episode").isEqualTo(5);
    }

    /**
     * Threads lending and returning across the edge leave the state equal to the count, every episode counted and
     * logged once (a clock that never stands still: each a WARNING).
     */
    @Test
    void theStateFollowsTheCountUnderRacingThreads() throws Exception {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong();
        DryWatch w = new DryWatch("the queue R", "its senders wait", 2,
                () -> clock.addAndGet(DryWatch.QUIET.toNanos()));
        w.lent(); // one held throughout: the other two threads cross the edge between 1 and 2 (and 3)
        CountDownLatch go = new CountDownLatch(1);
        Runnable churn = () -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            for (int i = 0; i < 20_000; i++) {
                w.lent();
                w.returned();
            }
        };
        Thread a = Thread.ofPlatform().start(churn);
        Thread b = Thread.ofPlatform().start(churn);
        go.countDown();
        a.join();
        b.join();
        assertThat(w.lentNow()).isEqualTo(1);
        assertThat(w.isDry()).as("1 of 2 lent once the threads are done").isFalse();
        assertThat(w.episodes()).isPositive().isEqualTo(warnings().size());
    }
}
