package dev.rdma4j.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;

/**
 * rdma4j's JFR events: each disabled unless a recording's settings enable it ({@code rdma4j.jfc}, or
 * {@code -XX:StartFlightRecording:+dev.rdma4j.FailedCompletion#enabled=true}), recorded through {@link Flight}.
 *
 * <p>Threading: an event object is made, filled and committed by one thread.
 */
final class Events {
    private Events() {
    }

    @Name("dev.rdma4j.ConnectionEstablished")
    @Label("RDMA Connection Established")
    @Category({"rdma4j", "Connections"})
    @Description("A connection of the short path (dev.rdma4j.net) reached RTS with its peer")
    @Enabled(false)
    @StackTrace(false)
    static final class ConnectionEstablished extends Event {
        @Label("Connection")
        String connection;
        @Label("Local Address")
        String localAddress;
        @Label("Peer Address")
        String peerAddress;
        @Label("Exchange")
        @Description("rdma_cm or TCP")
        String exchange;
        @Label("QP Number")
        int qpNumber;
    }

    @Name("dev.rdma4j.ConnectionClosed")
    @Label("RDMA Connection Closed")
    @Category({"rdma4j", "Connections"})
    @Enabled(false)
    @StackTrace(false)
    static final class ConnectionClosed extends Event {
        @Label("Connection")
        String connection;
        @Label("Peer Address")
        String peerAddress;
        @Label("By Peer")
        @Description("The peer left first (disconnect or end of the TCP exchange)")
        boolean byPeer;
        @Label("Messages Sent")
        long messagesSent;
        @Label("Messages Received")
        long messagesReceived;
    }

    @Name("dev.rdma4j.ConnectionFailed")
    @Label("RDMA Connection Failed")
    @Category({"rdma4j", "Connections"})
    @Enabled(false)
    static final class ConnectionFailed extends Event {
        @Label("Connection")
        String connection;
        @Label("Peer Address")
        String peerAddress;
        @Label("Phase")
        @Description("connecting, accepting, or established")
        String phase;
        @Label("Cause")
        String cause;
    }

    @Name("dev.rdma4j.FailedCompletion")
    @Label("RDMA Failed Completion")
    @Category({"rdma4j", "Completions"})
    @Description("A work completion whose status is not IBV_WC_SUCCESS, dispatched by a CompletionEngine")
    @Enabled(false)
    @StackTrace(false)
    static final class FailedCompletion extends Event {
        @Label("Engine")
        String engine;
        @Label("Status")
        @Description("The ibv_wc_status, as WcStatus names it")
        String status;
        @Label("Opcode")
        @Description("RECV for a receive (known from rdma4j's wr_id); else as the device wrote it, which the verbs"
                + " leave undefined in a failed completion")
        String opcode;
        @Label("QP Number")
        int qpNumber;
        @Label("Vendor Error")
        int vendorError;
        @Label("Flushed")
        @Description("IBV_WC_WR_FLUSH_ERR: the queue pair was in error (closing, or after an earlier failure)")
        boolean flushed;
    }

    @Name("dev.rdma4j.AsyncEvent")
    @Label("RDMA Async Event")
    @Category({"rdma4j", "Devices"})
    @Description("An asynchronous event of a device (ibv_get_async_event): QP, CQ, SRQ, port or device")
    @Enabled(false)
    @StackTrace(false)
    static final class AsyncEventReceived extends Event {
        @Label("Device")
        String device;
        @Label("Type")
        @Description("The ibv_event_type, as AsyncEventType names it")
        String type;
        @Label("Element")
        String element;
    }

    @Name("dev.rdma4j.LongTurn")
    @Label("RDMA Engine Long Turn")
    @Category({"rdma4j", "Engine"})
    @Description("A turn of a CompletionEngine (its tasks, fd events and completions, not its wait) that took long:"
            + " callbacks that block or work that should move off the engine's thread")
    @Enabled(false)
    @Threshold("20 ms")
    @StackTrace(false)
    static final class LongTurn extends Event {
        @Label("Engine")
        String engine;
        @Label("Work")
        @Description("Completions, fd events and tasks handled in the turn")
        int work;
    }

    @Name("dev.rdma4j.CreditStall")
    @Label("RDMA Credit Stall")
    @Category({"rdma4j", "Connections"})
    @Description("A connection's messages waited in their send buffers for the peer to grant receives")
    @Enabled(false)
    @StackTrace(false)
    static final class CreditStall extends Event {
        @Label("Connection")
        String connection;
        @Label("Staged")
        @Description("Messages waiting for a credit when the stall ended")
        int staged;
        @Label("Stopped")
        @Description("The stall ended because the connection stopped sending, not by a credit")
        boolean stopped;
    }

    @Name("dev.rdma4j.ReceiveQueueDry")
    @Label("RDMA Receive Queue Dry")
    @Category({"rdma4j", "Connections"})
    @Description("A receive queue or shared receive queue had no buffer posted (all lent to messages not yet"
            + " closed): senders retry (RNR) or wait meanwhile")
    @Enabled(false)
    @StackTrace(false)
    static final class ReceiveQueueDry extends Event {
        @Label("Queue")
        String queue;
        @Label("Buffers")
        int buffers;
        @Label("Lent")
        @Description("Buffers lent to messages when the episode ended")
        int lent;
    }
}
