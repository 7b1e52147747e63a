package dev.rdma4j.netty;

import io.netty.channel.ChannelOption;

/**
 * The options of an {@link RdmaChannel} beside Netty's own ({@code CONNECT_TIMEOUT_MILLIS}, {@code AUTO_READ},
 * {@code ALLOW_HALF_CLOSURE}, {@code WRITE_BUFFER_WATER_MARK}, ...): the sizes of the registered buffers a connection
 * sends from and receives into. Set them on the client's {@code Bootstrap} or as the server's child options; they
 * apply when the connection is set up, and a change afterwards has no effect on it.
 *
 * <p>Threading: immutable constants.
 *
 * @param <T> the option's value type
 */
public final class RdmaChannelOption<T> extends ChannelOption<T> {
    /**
     * Receive buffers posted for the peer ({@code ibv_post_recv}); each is a credit the peer spends on one message.
     * Default 32, at least 2.
     */
    public static final ChannelOption<Integer> RECEIVE_BUFFERS = valueOf(RdmaChannelOption.class, "RECEIVE_BUFFERS");
    /** Registered send buffers: messages in flight at once ({@code ibv_post_send}). Default 32, at least 1. */
    public static final ChannelOption<Integer> SEND_BUFFERS = valueOf(RdmaChannelOption.class, "SEND_BUFFERS");
    /**
     * Bytes of each send and receive buffer: the largest RDMA SEND; writes are cut into (and small writes packed
     * into) messages of at most the smaller of both sides' sizes. Default 65,536; 64 to 16 MiB.
     */
    public static final ChannelOption<Integer> MESSAGE_SIZE = valueOf(RdmaChannelOption.class, "MESSAGE_SIZE");
    /**
     * Messages of at most this many bytes are sent inline ({@code IBV_SEND_INLINE}: the CPU copies them into the
     * work request, the device need not read the send buffer). Default 0 (never); at most what the device allows
     * for the QP ({@code max_inline_data}), else the connection's set-up fails.
     */
    public static final ChannelOption<Integer> INLINE_THRESHOLD = valueOf(RdmaChannelOption.class, "INLINE_THRESHOLD");

    /**
     * Readable bytes from which a direct write (held by nobody but the channel) goes by read rendezvous: its bytes are
     * registered for the peer to read ({@code ibv_reg_mr} with remote read, exactly those bytes), the peer RDMA READs
     * them ({@code IBV_WR_RDMA_READ}) into registered memory, and no send buffer carries them; a piece is at most 1 MiB.
     * Default 1,048,576; at least 4,096; {@link Integer#MAX_VALUE} turns it off (large writes are then cut into SENDs, copied unless
     * they lie in registered memory). Applies to this side's writes; the peer always reads what it is announced.
     */
    public static final ChannelOption<Integer> RENDEZVOUS_THRESHOLD =
            valueOf(RdmaChannelOption.class, "RENDEZVOUS_THRESHOLD");

    /**
     * Whether the channel's {@code alloc()} is its event loop's {@link RdmaByteBufAllocator}: direct buffers of 4 KiB
     * to 1 MiB are then registered memory, and writes of them (and of their slices) leave without a copy. Received
     * buffers are registered memory too: echoing one back is never copied. Default {@code false} (the configured
     * allocator; writes of 4 KiB and more from registered memory are sent without a copy all the same).
     */
    public static final ChannelOption<Boolean> REGISTERED_ALLOCATOR =
            valueOf(RdmaChannelOption.class, "REGISTERED_ALLOCATOR");

    /**
     * Whether the connection's completion queue is busy-polled ({@code CompletionEngine.busyPoll}): the event loop
     * polls it on every pass instead of waiting for its completion channel, and never sleeps while such a channel is
     * open (lowest latency for that connection, one core spinning). Default {@code false}. A whole loop polls with
     * {@code RdmaIoHandler.newFactory(PollingMode.BUSY_POLL)}.
     */
    public static final ChannelOption<Boolean> BUSY_POLL = valueOf(RdmaChannelOption.class, "BUSY_POLL");

    @SuppressWarnings("deprecation")
    private RdmaChannelOption() {
        super(null);
    }
}
