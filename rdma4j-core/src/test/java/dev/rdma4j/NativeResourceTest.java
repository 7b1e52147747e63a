package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The life-cycle rules every verbs object inherits, on a stand-in that counts destroys. */
class NativeResourceTest {

    static final class Fake extends NativeResource {
        final AtomicInteger destroyed = new AtomicInteger();

        Fake(String name, NativeResource parent) {
            super(name, parent);
        }

        Fake(String name, NativeResource parent, boolean pinnable) {
            super(name, parent, pinnable);
        }

        void use() {
            acquire(false);
            release(false);
        }

        @Override
        void destroy() {
            destroyed.incrementAndGet();
        }
    }

    @Test
    void closeIsIdempotentAndUseAfterCloseThrows() {
        Fake f = new Fake("Fake(a)", null);
        f.close();
        f.close();
        assertThat(f.destroyed).hasValue(1);
        assertThat(f.isClosed()).isTrue();
        assertThatThrownBy(f::use).isInstanceOf(IllegalStateException.class).hasMessage("Fake(a) is closed");
    }

    @Test
    void parentRefusesToCloseWhileChildrenLive() {
        Fake parent = new Fake("Fake(parent)", null);
        Fake child = new Fake("Fake(child)", parent);
        assertThatThrownBy(parent::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot close Fake(parent)").hasMessageContaining("still used by 1 open object(s)");
        assertThat(parent.destroyed).hasValue(0);
        parent.use(); // still usable after the refused close
        child.close();
        parent.close();
        assertThat(parent.destroyed).hasValue(1);
        assertThatThrownBy(() -> new Fake("Fake(late)", parent)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void concurrentClosesDestroyExactlyOnce() throws Exception {
        for (int round = 0; round < 200; round++) {
            Fake f = new Fake("Fake(r)", null);
            Thread[] threads = new Thread[4];
            for (int i = 0; i < threads.length; i++) {
                threads[i] = Thread.ofVirtual().start(f::close);
            }
            for (Thread t : threads) {
                t.join();
            }
            assertThat(f.destroyed).hasValue(1);
        }
    }

    /**
     * Issue 9: with calls acquiring in a tight loop, a close that waits for the count of calls in progress
     * to reach 0 while new calls keep arriving never wins. Closing must first refuse new calls.
     */
    @Test
    void closeWinsAgainstEightVirtualThreadsCallingInATightLoop() throws Exception {
        for (int round = 0; round < 5; round++) {
            Fake f = new Fake("Fake(busy)", null);
            AtomicLong calls = new AtomicLong();
            List<Thread> callers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                callers.add(Thread.ofVirtual().start(() -> {
                    try {
                        for (;;) {
                            f.acquire(false);
                            calls.incrementAndGet();
                            for (int k = 0; k < 200; k++) {
                                Thread.onSpinWait(); // the verb's own time: calls overlap, as posts and polls do
                            }
                            f.release(false);
                        }
                    } catch (IllegalStateException closed) {
                        // the expected end: closing or closed
                    }
                }));
            }
            // (on 2 cores only two of the eight may ever run: spinning virtual threads do not yield)
            while (calls.get() < 10_000) {
                Thread.onSpinWait();
            }
            CompletableFuture<Void> close = CompletableFuture.runAsync(f::close, r -> Thread.ofPlatform().daemon().start(r));
            close.get(20, TimeUnit.SECONDS); // before the fix: never returned
            for (Thread t : callers) {
                assertThat(t.join(java.time.Duration.ofSeconds(20))).as("caller ended").isTrue();
            }
            assertThat(f.destroyed).hasValue(1);
            assertThat(f.isClosed()).isTrue();
        }
    }

    @Test
    void aClosingObjectRefusesNewCallsAndClosesWhenTheCallInProgressReturns() throws Exception {
        Fake f = new Fake("Fake(c)", null);
        f.acquire(false); // a call in progress
        CompletableFuture<Void> close = CompletableFuture.runAsync(f::close, r -> Thread.ofPlatform().daemon().start(r));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (;;) { // the closer announces itself: new calls are refused while the one in progress runs
            try {
                f.use();
            } catch (IllegalStateException e) {
                assertThat(e).hasMessage("Fake(c) is closing");
                break;
            }
            assertThat(System.nanoTime()).as("close began").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(close).isNotDone();
        assertThat(f.destroyed).hasValue(0);
        CompletableFuture<Void> secondClose = CompletableFuture.runAsync(f::close, r -> Thread.ofPlatform().daemon().start(r));
        f.release(false);
        close.get(20, TimeUnit.SECONDS);
        secondClose.get(20, TimeUnit.SECONDS);
        assertThat(f.destroyed).hasValue(1);
        assertThatThrownBy(f::use).hasMessage("Fake(c) is closed");
    }

    @Test
    void aRefusedCloseLeavesTheObjectUsable() {
        Fake parent = new Fake("Fake(p)", null);
        parent.acquire(false);
        Fake child = new Fake("Fake(k)", parent);
        assertThatThrownBy(parent::close).hasMessageContaining("still used by 1");
        parent.use();
        parent.release(false);
        child.close();
        parent.close();
        assertThat(parent.destroyed).hasValue(1);
    }

    /** Issue 10, item 5: a refused close names what still uses the object, not just how many. */
    @Test
    void aRefusedCloseNamesTheOpenChildren() {
        Fake parent = new Fake("Fake(parent)", null);
        Fake pd = new Fake("Fake(pd)", parent);
        Fake cq = new Fake("Fake(cq)", parent);
        assertThatThrownBy(parent::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot close Fake(parent)")
                .hasMessageContaining("still used by 2 open object(s)")
                .hasMessageContaining("Fake(pd)").hasMessageContaining("Fake(cq)")
                .hasMessageNotContaining("posted work request");
        cq.close();
        assertThatThrownBy(parent::close).hasMessageContaining("still used by 1 open object(s): Fake(pd)")
                .hasMessageNotContaining("Fake(cq)");
        pd.close();
        parent.close();
        assertThat(parent.destroyed).hasValue(1);
    }

    /** Posted work requests pin a region through the same counter; they are counted apart from open objects. */
    @Test
    void postedWorkRequestsAreCountedApartFromOpenObjects() {
        Fake region = new Fake("Fake(region)", null);
        for (int i = 0; i < 3; i++) {
            region.acquire(true); // what WorkRing.pin does for each posted request using the region
        }
        assertThatThrownBy(region::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot close Fake(region)")
                .hasMessageContaining("pinned by 3 posted work request(s)")
                .hasMessageNotContaining("open object");
        Fake child = new Fake("Fake(child)", region);
        assertThatThrownBy(region::close).hasMessageContaining("still used by 1 open object(s): Fake(child)")
                .hasMessageContaining("pinned by 3 posted work request(s)");
        child.close();
        for (int i = 0; i < 3; i++) {
            region.release(true);
        }
        region.close();
        assertThat(region.destroyed).hasValue(1);
    }

    /**
     * Issue 11: a region's pins are counted on per-queue stripes (no contended atomic per posted request), and
     * close still refuses while any stripe holds one, names them apart from open objects, and a pin after
     * close is refused.
     */
    @Test
    void stripedPinsRefuseCloseLikeAnyOtherPin() {
        Fake region = new Fake("Fake(region)", null, true);
        int[] stripes = {NativeResource.pinStripe(), NativeResource.pinStripe(), NativeResource.pinStripe()};
        for (int s : stripes) {
            region.pin(s);
        }
        assertThat(region.pinCount()).isEqualTo(3);
        assertThatThrownBy(region::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pinned by 3 posted work request(s)").hasMessageNotContaining("open object");
        Fake child = new Fake("Fake(child)", region);
        assertThatThrownBy(region::close).hasMessageContaining("still used by 1 open object(s): Fake(child)")
                .hasMessageContaining("pinned by 3 posted work request(s)");
        child.close();
        region.unpin(stripes[0]);
        region.unpin(stripes[1]);
        assertThatThrownBy(region::close).hasMessageContaining("pinned by 1 posted work request(s)");
        region.pin(stripes[0]); // a pin and its unpin may be on different threads, never on different stripes
        region.unpin(stripes[0]);
        region.unpin(stripes[2]);
        region.close();
        assertThat(region.destroyed).hasValue(1);
        assertThatThrownBy(() -> region.pin(stripes[0])).isInstanceOf(IllegalStateException.class)
                .hasMessage("Fake(region) is closed");
        assertThat(region.pinCount()).isZero();
    }

    /** closeWhenIdle: the last unpin closes a striped region. */
    @Test
    void lastUnpinClosesAStripedRegionThatShouldCloseWhenIdle() {
        Fake region = new Fake("Fake(region)", null, true);
        int s = NativeResource.pinStripe();
        region.pin(s);
        region.closeWhenIdle();
        assertThat(region.isClosed()).isFalse();
        region.unpin(s);
        assertThat(region.isClosed()).isTrue();
    }

    /**
     * Pins racing a close on other threads: either the pin is refused or the close is; a close never succeeds
     * while a pin it let through is held.
     */
    @Test
    void aCloseNeverWinsAgainstAPinItLetThrough() throws Exception {
        for (int round = 0; round < 300; round++) {
            Fake region = new Fake("Fake(region)", null, true);
            java.util.concurrent.atomic.AtomicBoolean heldWhileClosed = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            List<Thread> pinners = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int stripe = NativeResource.pinStripe();
                pinners.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        for (int k = 0; k < 200; k++) {
                            try {
                                region.pin(stripe);
                            } catch (IllegalStateException refused) {
                                return; // closing or closed
                            }
                            if (region.isClosed()) {
                                heldWhileClosed.set(true);
                            }
                            region.unpin(stripe);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            go.countDown();
            while (!region.isClosed()) {
                try {
                    region.close();
                } catch (IllegalStateException pinned) {
                    Thread.onSpinWait();
                }
            }
            for (Thread t : pinners) {
                t.join();
            }
            assertThat(heldWhileClosed).as("a pin was held after close").isFalse();
            assertThat(region.destroyed).hasValue(1);
        }
    }

    /** With creation tracking on (-Ddev.rdma4j.leakDetection=paranoid), the message says where each child was made. */
    @Test
    void creationTrackingSaysWhereEachChildWasCreated() {
        LeakDetection.Level was = LeakDetection.level();
        LeakDetection.setLevel(LeakDetection.Level.PARANOID);
        Fake parent;
        Fake child;
        try {
            parent = new Fake("Fake(parent)", null);
            child = makeChild(parent);
        } finally {
            LeakDetection.setLevel(was);
        }
        assertThatThrownBy(parent::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Fake(child) created at dev.rdma4j.NativeResourceTest.makeChild(NativeResourceTest.java:")
                .satisfies(e -> {
                    assertThat(e.getSuppressed()).hasSize(1);
                    assertThat(e.getSuppressed()[0]).hasMessageContaining("Fake(child) was created here");
                    assertThat(e.getSuppressed()[0].getStackTrace()[0].getMethodName()).isEqualTo("makeChild");
                });
        child.close();
        parent.close();
        // without tracking, the message says how to turn it on
        LeakDetection.setLevel(LeakDetection.Level.SIMPLE);
        Fake p2;
        Fake c2;
        try {
            p2 = new Fake("Fake(p2)", null);
            c2 = new Fake("Fake(c2)", p2);
        } finally {
            LeakDetection.setLevel(was);
        }
        assertThatThrownBy(p2::close).hasMessageContaining("-Ddev.rdma4j.leakDetection=paranoid");
        c2.close();
        p2.close();
    }

    private static Fake makeChild(Fake parent) {
        return new Fake("Fake(child)", parent);
    }

    /** A long list of children is cut short, with the number left out. */
    @Test
    void manyChildrenAreListedUpToALimit() {
        Fake parent = new Fake("Fake(parent)", null);
        List<Fake> kids = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            kids.add(new Fake("Fake(kid" + i + ")", parent));
        }
        assertThatThrownBy(parent::close).hasMessageContaining("still used by 25 open object(s)")
                .hasMessageContaining("and 15 more");
        kids.forEach(Fake::close);
        parent.close();
    }
}
