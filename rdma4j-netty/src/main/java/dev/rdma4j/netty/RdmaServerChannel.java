package dev.rdma4j.netty;

import dev.rdma4j.VerbsException;
import dev.rdma4j.connect.CmConnectionRequest;
import dev.rdma4j.connect.CmListener;
import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.ServerChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;

/**
 * A Netty server channel listening for RDMA connections ({@code rdma_create_id}, {@code rdma_bind_addr},
 * {@code rdma_listen} on the event loop's rdma_cm event channel): each connection request becomes an
 * {@link RdmaChannel}, handed to the pipeline as Netty's server channels hand their children (the
 * {@code ServerBootstrap} registers it on a worker loop, where it accepts the request with its own queue pair).
 *
 * <pre>{@code
 * new ServerBootstrap().group(boss, workers).channel(RdmaServerChannel.class)
 *         .childHandler(...).bind(new InetSocketAddress(rdmaAddress, port));
 * }</pre>
 *
 * <p>Options: {@link ChannelOption#SO_BACKLOG} (the listen backlog, default 128) and Netty's own; the children's
 * come from {@code childOption}. Requests that arrive while nothing reads ({@code AUTO_READ} off) wait in rdma_cm;
 * those unanswered when the channel closes are rejected.
 *
 * <p>Threading: as every Netty channel: thread-safe; connection requests are handled on its event loop, an
 * {@link RdmaIoHandler}'s.
 */
public final class RdmaServerChannel extends AbstractServerChannel implements ServerChannel {
    private final Config config = new Config(this);
    private volatile boolean open = true;
    private volatile InetSocketAddress local;
    // event loop only
    private IoRegistration registration;
    private CmListener listener;
    private boolean accepting;

    /** A server channel: {@code ServerBootstrap.channel(RdmaServerChannel.class)}. */
    public RdmaServerChannel() {
    }

    @Override
    public ChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && listener != null;
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) super.localAddress();
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop l && l.isCompatible(ServerUnsafe.class);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        RdmaIoHandler.register(eventLoop(), (ServerUnsafe) unsafe(), promise, r -> registration = r, null);
    }

    @Override
    protected void doDeregister() {
        RdmaIoHandler.deregister(registration);
    }

    /** {@code rdma_bind_addr} and {@code rdma_listen} on the loop's rdma_cm event channel. */
    @Override
    protected void doBind(SocketAddress localAddress) throws Exception {
        if (!(localAddress instanceof InetSocketAddress address)) {
            throw new java.nio.channels.UnsupportedAddressTypeException();
        }
        RdmaIoHandler handler = registration.attachment();
        try {
            listener = CmListener.listen(handler.cmChannel(), address, config.backlog);
        } catch (VerbsException e) {
            throw new IOException("cannot listen for RDMA connections on " + address + ": " + e.getMessage(), e);
        }
        local = listener.localAddress();
    }

    @Override
    protected void doClose() {
        open = false;
        CmListener l = listener;
        if (l != null) {
            l.close(); // unanswered requests are rejected
        }
    }

    /** Takes the next connection request (rdma_cm's CONNECT_REQUEST) when it comes. */
    @Override
    protected void doBeginRead() {
        if (accepting || listener == null || !open) {
            return;
        }
        accepting = true;
        CmListener l = listener;
        l.nextRequestAsync().whenComplete((request, e) -> { // on this loop: the listener's events are its engine's
            accepting = false;
            if (e != null || !open) {
                if (request != null) {
                    reject(request);
                }
                return;
            }
            pipeline().fireChannelRead(new RdmaChannel(this, request));
            pipeline().fireChannelReadComplete(); // with auto-read, asks for the next one
        });
    }

    private static void reject(CmConnectionRequest r) {
        try {
            r.reject(new byte[0]);
        } catch (IOException | RuntimeException ignored) {
            // the listener closed with it
        }
    }

    @Override
    public String toString() {
        return "RdmaServerChannel[" + local + (open ? "" : ", closed") + "]";
    }

    /** The server channel's unsafe, and what {@link RdmaIoHandler} registers. */
    private final class ServerUnsafe extends AbstractUnsafe implements RdmaIoHandle {
        @Override
        public void connect(SocketAddress remote, SocketAddress localAddress, ChannelPromise promise) {
            safeSetFailure(promise, new UnsupportedOperationException("a server channel does not connect"));
        }

        @Override
        public void close() {
            close(voidPromise());
        }
    }

    /** Netty's options and {@code SO_BACKLOG}. */
    private static final class Config extends DefaultChannelConfig {
        private volatile int backlog = 128;

        Config(RdmaServerChannel channel) {
            super(channel);
        }

        @Override
        public Map<ChannelOption<?>, Object> getOptions() {
            return getOptions(super.getOptions(), ChannelOption.SO_BACKLOG);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T getOption(ChannelOption<T> option) {
            return option == ChannelOption.SO_BACKLOG ? (T) Integer.valueOf(backlog) : super.getOption(option);
        }

        @Override
        public <T> boolean setOption(ChannelOption<T> option, T value) {
            validate(option, value);
            if (option == ChannelOption.SO_BACKLOG) {
                int b = (Integer) value;
                if (b < 1) {
                    throw new IllegalArgumentException("SO_BACKLOG must be at least 1: " + b);
                }
                backlog = b;
                return true;
            }
            return super.setOption(option, value);
        }
    }
}
