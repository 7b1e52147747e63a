package dev.rdma4j.netty;

import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import java.util.Map;

/**
 * The configuration of an {@link RdmaChannel}: Netty's options (auto-read, write buffer water marks, connect
 * timeout, half-closure, allocators) and the {@link RdmaChannelOption}s, checked when set. {@code SO_KEEPALIVE} and
 * {@code TCP_NODELAY}, which TCP code such as gRPC sets, are accepted and reported but change nothing: there is no
 * keep-alive (a peer that is gone fails the next message sent to it, within seconds), and no Nagle delay (every
 * flush posts at once).
 *
 * <p>Threading: as Netty's {@code DefaultChannelConfig}: options may be set from any thread; the RDMA sizes are read
 * once, on the event loop, when the connection is set up.
 */
public final class RdmaChannelConfig extends DefaultChannelConfig {
    private volatile int receiveBuffers = 32;
    private volatile int sendBuffers = 32;
    private volatile int messageSize = 65_536;
    private volatile int inlineThreshold;
    private volatile int rendezvousThreshold = RdmaPipe.RENDEZVOUS_DEFAULT;
    private volatile boolean allowHalfClosure;
    private volatile boolean registeredAllocator;
    private volatile boolean busyPoll;
    /** Accepted for TCP code (gRPC sets them): kept and reported, with no effect on RDMA. */
    private volatile boolean keepAlive;
    private volatile boolean noDelay = true;
    /** The loop's registered allocator once the connection is set up. */
    private volatile RdmaByteBufAllocator registered;

    RdmaChannelConfig(RdmaChannel channel) {
        super(channel);
    }

    /** Set up: the allocator of the loop's registered memory on the connection's device. */
    void registeredMemory(RdmaByteBufAllocator allocator) {
        this.registered = allocator;
    }

    /**
     * The channel's allocator: with {@link RdmaChannelOption#REGISTERED_ALLOCATOR} and once connected, the event
     * loop's {@link RdmaByteBufAllocator}; otherwise the configured one.
     */
    @Override
    public io.netty.buffer.ByteBufAllocator getAllocator() {
        RdmaByteBufAllocator r = registered;
        return registeredAllocator && r != null ? r : super.getAllocator();
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), RdmaChannelOption.RECEIVE_BUFFERS, RdmaChannelOption.SEND_BUFFERS,
                RdmaChannelOption.MESSAGE_SIZE, RdmaChannelOption.INLINE_THRESHOLD,
                RdmaChannelOption.RENDEZVOUS_THRESHOLD, ChannelOption.ALLOW_HALF_CLOSURE,
                RdmaChannelOption.REGISTERED_ALLOCATOR, RdmaChannelOption.BUSY_POLL, ChannelOption.SO_KEEPALIVE,
                ChannelOption.TCP_NODELAY);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(ChannelOption<T> option) {
        if (option == RdmaChannelOption.RECEIVE_BUFFERS) {
            return (T) Integer.valueOf(receiveBuffers);
        }
        if (option == RdmaChannelOption.SEND_BUFFERS) {
            return (T) Integer.valueOf(sendBuffers);
        }
        if (option == RdmaChannelOption.MESSAGE_SIZE) {
            return (T) Integer.valueOf(messageSize);
        }
        if (option == RdmaChannelOption.INLINE_THRESHOLD) {
            return (T) Integer.valueOf(inlineThreshold);
        }
        if (option == RdmaChannelOption.RENDEZVOUS_THRESHOLD) {
            return (T) Integer.valueOf(rendezvousThreshold);
        }
        if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            return (T) Boolean.valueOf(allowHalfClosure);
        }
        if (option == RdmaChannelOption.REGISTERED_ALLOCATOR) {
            return (T) Boolean.valueOf(registeredAllocator);
        }
        if (option == RdmaChannelOption.BUSY_POLL) {
            return (T) Boolean.valueOf(busyPoll);
        }
        if (option == ChannelOption.SO_KEEPALIVE) {
            return (T) Boolean.valueOf(keepAlive);
        }
        if (option == ChannelOption.TCP_NODELAY) {
            return (T) Boolean.valueOf(noDelay);
        }
        return super.getOption(option);
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        validate(option, value);
        if (option == RdmaChannelOption.RECEIVE_BUFFERS) {
            receiveBuffers = inRange("RECEIVE_BUFFERS", (Integer) value, 2, 65_535);
        } else if (option == RdmaChannelOption.SEND_BUFFERS) {
            sendBuffers = inRange("SEND_BUFFERS", (Integer) value, 1, 65_535);
        } else if (option == RdmaChannelOption.MESSAGE_SIZE) {
            messageSize = inRange("MESSAGE_SIZE", (Integer) value, 64, 16 << 20);
        } else if (option == RdmaChannelOption.INLINE_THRESHOLD) {
            inlineThreshold = inRange("INLINE_THRESHOLD", (Integer) value, 0, 65_535);
        } else if (option == RdmaChannelOption.RENDEZVOUS_THRESHOLD) {
            rendezvousThreshold = inRange("RENDEZVOUS_THRESHOLD", (Integer) value, 4096, Integer.MAX_VALUE);
        } else if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            allowHalfClosure = (Boolean) value;
        } else if (option == RdmaChannelOption.REGISTERED_ALLOCATOR) {
            registeredAllocator = (Boolean) value;
        } else if (option == RdmaChannelOption.BUSY_POLL) {
            busyPoll = (Boolean) value;
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            keepAlive = (Boolean) value; // RDMA has no keep-alive: a gone peer fails the next message (RETRY_EXC_ERR)
        } else if (option == ChannelOption.TCP_NODELAY) {
            noDelay = (Boolean) value; // no Nagle here: every flush posts at once
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    private static int inRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "]: " + value);
        }
        return value;
    }

    /**
     * Receive buffers posted for the peer ({@link RdmaChannelOption#RECEIVE_BUFFERS}).
     *
     * @return the count
     */
    public int getReceiveBuffers() {
        return receiveBuffers;
    }

    /**
     * Registered send buffers ({@link RdmaChannelOption#SEND_BUFFERS}).
     *
     * @return the count
     */
    public int getSendBuffers() {
        return sendBuffers;
    }

    /**
     * Bytes per send and receive buffer ({@link RdmaChannelOption#MESSAGE_SIZE}).
     *
     * @return the size
     */
    public int getMessageSize() {
        return messageSize;
    }

    /**
     * The largest message sent inline ({@link RdmaChannelOption#INLINE_THRESHOLD}).
     *
     * @return bytes, 0 for none
     */
    public int getInlineThreshold() {
        return inlineThreshold;
    }

    /**
     * Readable bytes from which a direct write goes by read rendezvous ({@link RdmaChannelOption#RENDEZVOUS_THRESHOLD}).
     *
     * @return bytes; {@link Integer#MAX_VALUE} for never
     */
    public int getRendezvousThreshold() {
        return rendezvousThreshold;
    }

    /**
     * Whether the connection's completion queue is busy-polled ({@link RdmaChannelOption#BUSY_POLL}).
     *
     * @return {@code true} if so
     */
    public boolean isBusyPoll() {
        return busyPoll;
    }

    /**
     * Whether {@code alloc()} hands out registered memory once connected ({@link
     * RdmaChannelOption#REGISTERED_ALLOCATOR}).
     *
     * @return {@code true} if so
     */
    public boolean isRegisteredAllocator() {
        return registeredAllocator;
    }

    /**
     * Whether the peer's {@code shutdownOutput()} only ends the input (a {@code ChannelInputShutdownEvent}) rather
     * than closing the channel ({@link ChannelOption#ALLOW_HALF_CLOSURE}).
     *
     * @return {@code true} if so
     */
    public boolean isAllowHalfClosure() {
        return allowHalfClosure;
    }
}
