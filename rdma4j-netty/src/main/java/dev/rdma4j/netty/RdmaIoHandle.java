package dev.rdma4j.netty;

import io.netty.channel.IoEvent;
import io.netty.channel.IoHandle;
import io.netty.channel.IoRegistration;

/**
 * What {@link RdmaIoHandler} registers: the unsafe of an {@link RdmaChannel} or {@link RdmaServerChannel}. Their
 * I/O arrives through completion handlers and rdma_cm listeners on the loop thread, not as {@link IoEvent}s.
 */
interface RdmaIoHandle extends IoHandle {
    /** Closes the channel (the loop shuts down): never throws. */
    @Override
    void close();

    @Override
    default void handle(IoRegistration registration, IoEvent ioEvent) {
        // completions and rdma_cm events reach the channel directly
    }
}
