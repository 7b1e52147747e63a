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
