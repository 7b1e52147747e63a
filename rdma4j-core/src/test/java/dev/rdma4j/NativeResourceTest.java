package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The life-cycle rules every verbs object inherits, on a stand-in that counts destroys. */
class NativeResourceTest {

    static final class Fake extends NativeResource {
        final AtomicInteger destroyed = new AtomicInteger();

        Fake(String name, NativeResource parent) {
            super(name, parent);
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
}
