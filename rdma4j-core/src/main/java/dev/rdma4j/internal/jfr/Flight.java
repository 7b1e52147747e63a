package dev.rdma4j.internal.jfr;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.List;
import jdk.jfr.Configuration;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Recording;

/**
 * The one door to rdma4j's JFR events ({@link Events}): what the library calls where something happens. Every call
 * site first reads {@link #on} (one volatile load), true only while a recording enables at least one
 * {@code dev.rdma4j} event: while it is false nothing is allocated, timed or committed. The flag follows the
 * recordings through a {@link FlightRecorderListener}, registered when this class is first used (when an engine or
 * connection starts), so a recording started before or after that is seen.
 *
 * <p>Threading: any thread; each method records on the caller's thread.
 */
public final class Flight {
    /** The configuration that enables every rdma4j event, in the core jar (a JFR {@code .jfc} file). */
    public static final String CONFIGURATION = "/dev/rdma4j/rdma4j.jfc";

    private static final List<Class<? extends Event>> EVENTS = List.of(Events.ConnectionEstablished.class,
            Events.ConnectionClosed.class, Events.ConnectionFailed.class, Events.FailedCompletion.class,
            Events.AsyncEventReceived.class, Events.LongTurn.class, Events.CreditStall.class,
            Events.ReceiveQueueDry.class);

    /** Whether a recording enables some rdma4j event: the guard of every call site. */
    public static volatile boolean on;

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
            on = false; // a runtime without jdk.jfr's recorder (or a security manager refusing it): never on
        }
    }

    private Flight() {
    }

    /** Registers the events with the recorder (so its settings reach them) and sets {@link #on}. */
    private static void refresh() {
        boolean any = false;
        for (Class<? extends Event> c : EVENTS) {
            any |= EventType.getEventType(c).isEnabled();
        }
        on = any;
    }

    /**
     * rdma4j's configuration ({@value #CONFIGURATION}): every {@code dev.rdma4j} event enabled, long turns over
     * 20 ms.
     *
     * @return the configuration, for {@code new Recording(configuration)}
     * @throws IllegalStateException if the jar lacks it or it does not parse
     */
    public static Configuration configuration() {
        try (Reader r = new InputStreamReader(Flight.class.getResourceAsStream(CONFIGURATION),
                StandardCharsets.UTF_8)) {
            return Configuration.create(r);
        } catch (IOException | ParseException | NullPointerException e) {
            throw new IllegalStateException("rdma4j's JFR configuration " + CONFIGURATION + " cannot be read", e);
        }
    }

    /** {@code e} begun (its start time taken) if a recording enables its type; else null, and nothing is timed. */
    private static Object started(Event e) {
        if (!e.isEnabled()) {
            return null;
        }
        e.begin();
        return e;
    }

    /**
     * A connection was established (the short path, rdma_cm or TCP exchange).
     *
     * @param connection its name
     * @param local the local address, or null
     * @param peer the peer's address
     * @param exchange {@code RDMA_CM} or {@code TCP}
     * @param qpNumber its queue pair's number
     */
    public static void established(String connection, String local, String peer, String exchange, int qpNumber) {
        var e = new Events.ConnectionEstablished();
        if (e.isEnabled()) {
            e.connection = connection;
            e.localAddress = local;
            e.peerAddress = peer;
            e.exchange = exchange;
            e.qpNumber = qpNumber;
            e.commit();
        }
    }

    /**
     * A connection closed: by this side ({@code byPeer} false) or after the peer left.
     *
     * @param connection its name
     * @param peer the peer's address
     * @param byPeer whether the peer left first
     * @param messagesSent messages it sent
     * @param messagesReceived messages it received
     */
    public static void closed(String connection, String peer, boolean byPeer, long messagesSent,
            long messagesReceived) {
        var e = new Events.ConnectionClosed();
        if (e.isEnabled()) {
            e.connection = connection;
            e.peerAddress = peer;
            e.byPeer = byPeer;
            e.messagesSent = messagesSent;
            e.messagesReceived = messagesReceived;
            e.commit();
        }
    }

    /**
     * Connecting or accepting failed, or an established connection failed.
     *
     * @param connection its name
     * @param peer the peer's address
     * @param phase connecting, accepting or established
     * @param cause why
     */
    public static void failed(String connection, String peer, String phase, Throwable cause) {
        var e = new Events.ConnectionFailed();
        if (e.isEnabled()) {
            e.connection = connection;
            e.peerAddress = peer;
            e.phase = phase;
            e.cause = String.valueOf(cause);
            e.commit();
        }
    }

    /**
     * A completion that is not {@code IBV_WC_SUCCESS}, as the engine dispatched it.
     *
     * @param engine the engine's name
     * @param status the status's name
     * @param opcode the opcode's name (undefined by the verbs for a failed send-side completion)
     * @param qpNumber the queue pair's number
     * @param vendorError {@code vendor_err}
     * @param flushed whether it is {@code IBV_WC_WR_FLUSH_ERR}
     */
    public static void failedCompletion(String engine, String status, String opcode, int qpNumber, int vendorError,
            boolean flushed) {
        var e = new Events.FailedCompletion();
        if (e.isEnabled()) {
            e.engine = engine;
            e.status = status;
            e.opcode = opcode;
            e.qpNumber = qpNumber;
            e.vendorError = vendorError;
            e.flushed = flushed;
            e.commit();
        }
    }

    /**
     * An asynchronous event of a device ({@code ibv_get_async_event}).
     *
     * @param device the device's name
     * @param type the event type's name
     * @param element the queue pair, CQ, SRQ or port it concerns
     */
    public static void asyncEvent(String device, String type, String element) {
        var e = new Events.AsyncEventReceived();
        if (e.isEnabled()) {
            e.device = device;
            e.type = type;
            e.element = element;
            e.commit();
        }
    }

    /**
     * The start of an engine's turn's work (after its wait), to be given to {@link #turnEnded}.
     *
     * @return the begun event, or null unless a recording enables long turns
     */
    public static Object turnStarted() {
        return started(new Events.LongTurn());
    }

    /**
     * The end of the turn {@link #turnStarted} began: recorded if it took longer than the threshold.
     *
     * @param started what {@link #turnStarted} returned (not null)
     * @param engine the engine's name
     * @param work completions, fd events and tasks handled
     */
    public static void turnEnded(Object started, String engine, int work) {
        var e = (Events.LongTurn) started;
        e.end();
        if (e.shouldCommit()) {
            e.engine = engine;
            e.work = work;
            e.commit();
        }
    }

    /**
     * A connection's sends began to wait for the peer's credits, to be given to {@link #stallEnded}.
     *
     * @return the begun event, or null unless a recording enables credit stalls
     */
    public static Object stallStarted() {
        return started(new Events.CreditStall());
    }

    /**
     * The stall {@link #stallStarted} began is over (a credit came, or the connection stopped).
     *
     * @param stall what {@link #stallStarted} returned (not null)
     * @param connection the connection's name
     * @param staged messages still waiting
     * @param stopped whether the connection stopped sending
     */
    public static void stallEnded(Object stall, String connection, int staged, boolean stopped) {
        var e = (Events.CreditStall) stall;
        e.end();
        if (e.shouldCommit()) {
            e.connection = connection;
            e.staged = staged;
            e.stopped = stopped;
            e.commit();
        }
    }

    /**
     * A receive queue (or shared receive queue) ran dry, to be given to {@link #dryEnded}.
     *
     * @return the begun event, or null unless a recording enables dry receive queues
     */
    public static Object dryStarted() {
        return started(new Events.ReceiveQueueDry());
    }

    /**
     * The dry episode {@link #dryStarted} began is over: a buffer was posted again.
     *
     * @param dry what {@link #dryStarted} returned (not null)
     * @param queue names the queue
     * @param buffers its buffers
     * @param lent those lent when it ended
     */
    public static void dryEnded(Object dry, String queue, int buffers, int lent) {
        var e = (Events.ReceiveQueueDry) dry;
        e.end();
        if (e.shouldCommit()) {
            e.queue = queue;
            e.buffers = buffers;
            e.lent = lent;
            e.commit();
        }
    }
}
