package dev.rdma4j.tools.perf;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link WindowWatch}: a collection between its two looks makes the run disturbed, said with the side. */
class WindowWatchTest {

    @Test
    void aCollectionDuringTheRunIsReported() {
        WindowWatch watch = new WindowWatch();
        watch.before();
        System.gc();
        String line = watch.after("server");
        assertThat(line).startsWith(WindowWatch.DISTURBED + " (server):").containsPattern(" [1-9][0-9]* collection\\(s\\) during it");
    }

    /**
     * A compilation of 242 M guest instructions in a measured window was said as "the JIT compiled for 122 ms" with
     * few ticks and not counted as a disturbance; the runs that counted right had 20-36 ms.
     */
    @Test
    void aLongCompilationDisturbsTheRunWhateverItsTicks() {
        assertThat(WindowWatch.disturbed(122, 3, 0)).isTrue();
        assertThat(WindowWatch.disturbed(36, 2, 0)).isFalse();
        assertThat(WindowWatch.disturbed(0, WindowWatch.DISTURBING_TICKS, 0)).isTrue();
        assertThat(WindowWatch.disturbed(0, 0, 1)).isTrue();
    }

    @Test
    void theLookAfterIsTheNextLookBefore() {
        WindowWatch watch = new WindowWatch();
        watch.before();
        System.gc();
        assertThat(watch.after("client")).isNotNull();
        // no collection since: whatever the JIT did meanwhile, the collections are not counted twice
        String again = watch.after("client");
        assertThat(again == null ? "" : again).doesNotContainPattern(" [1-9][0-9]* collection");
    }
}
