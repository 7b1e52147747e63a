package dev.rdma4j.netty;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import jdk.jfr.StackTrace;

/**
 * rdma4j-netty's JFR events. {@code dev.rdma4j.netty.CreditStall}: a channel's writes waited for the peer's credits
 * (its duration). {@code dev.rdma4j.netty.Rendezvous}: a large write moved by rendezvous (the receiver
 * RDMA-reads it from the sender's registered memory), recorded on both sides with its duration: the sender's from the
 * announcement to the peer's word that it read, the receiver's from posting the read to its completion. Disabled
 * unless a recording enables it (the core's {@code dev/rdma4j/rdma4j.jfc} does). As in the core's events, the pipe
 * reads one volatile flag, {@link #on}, which a {@link FlightRecorderListener} keeps true only while a recording
 * enables the event: otherwise nothing is made or timed.
 *
 * <p>Threading: the events are made and committed on the channel's event loop; the flag is read by it and written by
 * the recorder's listener.
 */
final class NettyFlight {
    /** Whether a recording enables one of the events. */
    static volatile boolean on;
    /** A stall under way that no recording asked to time. */
    private static final Object NOT_RECORDED = new Object();

    static {
        try {
            if (FlightRecorder.isAvailable()) {
                FlightRecorder.addListener(new FlightRecorderListener() {
                    @Override
                    public void recordingStateChanged(Recording recording) {
                        refresh();
                    }
                });
                refresh();
            }
        } catch (RuntimeException | LinkageError unavailable) {
            on = false; // no recorder in this runtime: never on
        }
    }

    private NettyFlight() {
    }

    private static void refresh() {
        on = EventType.getEventType(RendezvousEvent.class).isEnabled()
                || EventType.getEventType(CreditStallEvent.class).isEnabled();
    }

    /** A rendezvous starts (announced, or its read posted): its event begun, or null if none is recorded. */
    static Object started() {
        if (!on) {
            return null;
        }
        var e = new RendezvousEvent();
        if (!e.isEnabled()) {
            return null;
        }
        e.begin();
        return e;
    }

    /** The rendezvous {@link #started} began is over: read by the peer ({@code sent}), or read by this side. */
    static void ended(Object started, Object channel, long bytes, boolean sent, boolean succeeded) {
        if (started == null) {
            return;
        }
        var e = (RendezvousEvent) started;
        e.end();
        if (e.shouldCommit()) {
            e.channel = String.valueOf(channel);
            e.bytes = bytes;
            e.sent = sent;
            e.succeeded = succeeded;
            e.commit();
        }
    }

    /** Writes began to wait for the peer's credits: the stall's event, or a marker if none is recorded. */
    static Object stallStarted() {
        if (on) {
            var e = new CreditStallEvent();
            if (e.isEnabled()) {
                e.begin();
                return e;
            }
        }
        return NOT_RECORDED;
    }

    /** The stall {@link #stallStarted} began is over. */
    static void stallEnded(Object stall, Object channel) {
        if (stall instanceof CreditStallEvent e) {
            e.end();
            if (e.shouldCommit()) {
                e.channel = String.valueOf(channel);
                e.commit();
            }
        }
    }

    @Name("dev.rdma4j.netty.CreditStall")
    @Label("RDMA Channel Credit Stall")
    @Category({"rdma4j", "Netty"})
    @Description("An rdma4j-netty channel's writes waited in the outbound buffer for the peer to grant receives")
    @Enabled(false)
    @StackTrace(false)
    static final class CreditStallEvent extends Event {
        @Label("Channel")
        String channel;
    }

    @Name("dev.rdma4j.netty.Rendezvous")
    @Label("RDMA Rendezvous Transfer")
    @Category({"rdma4j", "Netty"})
    @Description("A large write moved by rendezvous: the receiver reads it from the sender's registered memory")
    @Enabled(false)
    @StackTrace(false)
    static final class RendezvousEvent extends Event {
        @Label("Channel")
        String channel;
        @Label("Bytes")
        @DataAmount
        long bytes;
        @Label("Sent")
        @Description("True on the sender (announced until the peer read it), false on the receiver (its read)")
        boolean sent;
        @Label("Succeeded")
        boolean succeeded;
    }
}
