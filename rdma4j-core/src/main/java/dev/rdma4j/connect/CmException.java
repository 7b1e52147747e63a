package dev.rdma4j.connect;

import dev.rdma4j.internal.ffi.Errno;
import dev.rdma4j.internal.ffi.IbCm;
import dev.rdma4j.internal.ffi.Native;
import java.io.IOException;

/**
 * A connection could not be set up: the rdma_cm event that ended it (address/route error, unreachable,
 * rejected, connect error), its status, and the private data a rejecting peer sent.
 *
 * <p>The message decodes the status: a negative status is an errno, named with its {@code strerror} text
 * ({@code UNREACHABLE (status -110: ETIMEDOUT, Connection timed out)}); the positive status of a
 * {@code REJECTED} event on InfiniBand or RoCE is the IB CM's reject reason ({@code enum ib_cm_rej_reason}),
 * named, with what it usually means: 8 ({@code INVALID_SERVICE_ID}) is the peer's CM saying that nothing
 * listens on that port, 28 ({@code CONSUMER_DEFINED}) a reject by the peer's application
 * ({@code rdma_reject}). (On iWARP a reject is {@code -ECONNREFUSED}.)
 *
 * <p>Immutable, hence thread-safe.
 */
public final class CmException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The IB CM's reject reason when nothing listens on the port (no such service id). */
    public static final int REJECT_INVALID_SERVICE_ID = IbCm.IB_CM_REJ_INVALID_SERVICE_ID;
    /** The IB CM's reject reason of {@code rdma_reject}: the peer's application refused. */
    public static final int REJECT_CONSUMER_DEFINED = IbCm.IB_CM_REJ_CONSUMER_DEFINED;

    /** The event that ended the attempt. */
    private final CmEventType event;
    /** The event's status (a negative errno, or the IB CM reject reason). */
    private final int status;
    /** Private data carried by the event (a reject's reason), possibly empty. */
    private final byte[] privateData;

    /**
     * Creates the exception; the message decodes {@code status} (see the class comment).
     *
     * @param what        what was being done, e.g. "connect to 198.18.0.1:7174"
     * @param event       the event
     * @param status      its status
     * @param privateData its private data
     */
    public CmException(String what, CmEventType event, int status, byte[] privateData) {
        super(what + " failed: " + event + " (" + describe(event, status) + ")" + explain(event, status)
                + (showsPrivateData(event, status) && privateData.length > 0
                        ? ", " + privateData.length + " bytes of private data" : ""));
        this.event = event;
        this.status = status;
        this.privateData = privateData.clone();
    }

    /** "status -110: ETIMEDOUT, Connection timed out", "status 8: IB CM reject reason INVALID_SERVICE_ID". */
    static String describe(CmEventType event, int status) {
        if (status < 0) {
            String name = Errno.name(-status);
            return "status " + status + ": " + (name == null ? "errno " + -status : name) + ", " + strerror(-status);
        }
        if (event == CmEventType.REJECTED && status > 0) {
            String name = IbCm.rejectReason(status);
            return "status " + status + ": IB CM reject reason " + (name == null ? "unknown" : name);
        }
        return "status " + status;
    }

    /** What the event and status usually mean, after a colon, or nothing. */
    private static String explain(CmEventType event, int status) {
        return switch (event) {
            case REJECTED -> switch (status) {
                case REJECT_INVALID_SERVICE_ID -> ": no listener on that port (the peer's CM knows no such service)";
                case REJECT_CONSUMER_DEFINED -> ": rejected by the peer (rdma_reject)";
                case -Errno.ECONNREFUSED -> ": refused by the peer, or no listener on that port";
                default -> "";
            };
            case UNREACHABLE -> status == -Errno.ETIMEDOUT
                    ? ": no answer to the connect request (no host at that address, or no RDMA device on it)"
                    : ": the peer cannot be reached";
            case ADDR_ERROR -> ": address resolution (rdma_resolve_addr) failed";
            case ROUTE_ERROR -> ": route resolution (rdma_resolve_route) failed";
            case CONNECT_ERROR -> ": the connection failed while it was being established";
            case DEVICE_REMOVAL -> ": the RDMA device was removed";
            default -> "";
        };
    }

    /** A CM-made reject carries the CM's own padding, not data a peer sent: its length is noise. */
    private static boolean showsPrivateData(CmEventType event, int status) {
        return event != CmEventType.REJECTED || status == REJECT_CONSUMER_DEFINED || status < 0;
    }

    private static String strerror(int errno) {
        try {
            return Native.strerror(errno);
        } catch (RuntimeException | LinkageError e) { // no native access: the name alone
            return "errno " + errno;
        }
    }

    /**
     * The event that ended the attempt.
     *
     * @return e.g. {@link CmEventType#REJECTED}
     */
    public CmEventType event() {
        return event;
    }

    /**
     * The event's status.
     *
     * @return a negative errno, or the IB CM reject reason for {@code REJECTED} on InfiniBand/RoCE (e.g.
     *         {@link #REJECT_INVALID_SERVICE_ID}, {@link #REJECT_CONSUMER_DEFINED})
     */
    public int status() {
        return status;
    }

    /**
     * The status decoded, as in the message.
     *
     * @return e.g. {@code "status -110: ETIMEDOUT, Connection timed out"} or
     *         {@code "status 8: IB CM reject reason INVALID_SERVICE_ID"}
     */
    public String statusText() {
        return describe(event, status);
    }

    /**
     * The private data of a reject: what the peer passed to {@code rdma_reject} when it is rdma4j (see
     * {@link CmConnectionRequest#reject}), otherwise what the CM delivered (on InfiniBand/RoCE padded with
     * zeros to 148 bytes).
     *
     * @return a copy, possibly empty
     */
    public byte[] privateData() {
        return privateData.clone();
    }
}
