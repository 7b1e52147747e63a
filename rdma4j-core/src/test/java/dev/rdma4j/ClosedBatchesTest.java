package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, finding 5, without a device: a closed batch or {@link WorkCompletions} answered with the JDK's
 * "Already closed" (or {@code IndexOutOfBoundsException} for {@code wrId(0)}); now rdma4j's own
 * {@link IllegalStateException} names the object. And a UD queue pair refuses RDMA for what it is.
 */
class ClosedBatchesTest {

    @Test
    void closedWorkCompletionsSayTheyAreClosed() {
        WorkCompletions wcs = new WorkCompletions(4);
        wcs.close();
        assertThatThrownBy(() -> wcs.wrId(0)).isInstanceOf(IllegalStateException.class)
                .hasMessage("WorkCompletions(4) is closed");
        assertThatThrownBy(() -> wcs.status(0)).isInstanceOf(IllegalStateException.class)
                .hasMessage("WorkCompletions(4) is closed");
        assertThatThrownBy(() -> wcs.get(0)).isInstanceOf(IllegalStateException.class)
                .hasMessage("WorkCompletions(4) is closed");
    }

    @Test
    void openWorkCompletionsStillCheckTheIndex() {
        try (WorkCompletions wcs = new WorkCompletions(4)) {
            assertThatThrownBy(() -> wcs.wrId(0)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void aClosedSendBatchSaysItIsClosed() {
        SendBatch b = new SendBatch(2, 1, 16);
        b.sendInline(1, MemorySegment.ofArray(new byte[8]));
        b.close();
        for (var call : new org.assertj.core.api.ThrowableAssert.ThrowingCallable[] {
            b::unsignaled, b::fence, b::inline, b::solicited,
            () -> b.sendInline(2, MemorySegment.ofArray(new byte[8])),
            () -> b.writeInline(2, MemorySegment.ofArray(new byte[8]), new RemoteRegion(4096, 64, 1), 0)}) {
            assertThatThrownBy(call).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("SendBatch(")
                    .hasMessageEndingWith("is closed");
        }
    }

    @Test
    void aClosedReceiveBatchSaysItIsClosed() {
        ReceiveBatch b = new ReceiveBatch(1, 1);
        b.close();
        assertThatThrownBy(() -> b.receive(1, null, 0, 8)).isInstanceOf(IllegalStateException.class)
                .hasMessage("ReceiveBatch(1 requests) is closed");
    }

    @Test
    void udRefusesRdmaAsRdmaNotAsAMissingAddressHandle() {
        try (SendBatch b = new SendBatch(1, 1, 16)) {
            b.writeInline(1, MemorySegment.ofArray(new byte[8]), new RemoteRegion(4096, 64, 1), 0);
            org.assertj.core.api.Assertions.assertThat(b.refusalFor(QpType.UD, 0))
                    .isEqualTo("UD queue pairs have no RDMA read or write, nor atomics: they only send (sendTo)");
        }
    }
}
