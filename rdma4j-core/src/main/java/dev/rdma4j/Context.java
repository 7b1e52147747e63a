package dev.rdma4j;

import dev.rdma4j.internal.ffi.DeviceVerbs;
import dev.rdma4j.internal.ffi.NativeException;
import dev.rdma4j.internal.ffi.EventVerbs;
import dev.rdma4j.internal.ffi.Libc;
import java.lang.foreign.MemorySegment;
import java.util.Comparator;
import java.util.List;

/**
 * An open RDMA device ({@code struct ibv_context}, from {@code ibv_open_device}): the root of every
 * other verbs object. Thread-safe. Close it last: closing is refused while objects created from it
 * are open (the refusal names them), except the idle completion channels of a {@code CompletionEngine},
 * which it closes itself, so the engine may be closed before or after its contexts.
 */
public final class Context extends NativeResource {
    private final Device device;
    private final MemorySegment handle;
    private final java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
    private final java.util.concurrent.atomic.LongAdder listenerFailures = new java.util.concurrent.atomic.LongAdder();
    private final EventVerbs.Scratch asyncScratch = new EventVerbs.Scratch(arena);
    /** The thread inside processAsyncEvents (under the async lock), or null. */
    private volatile Thread delivering;
    private final java.util.concurrent.ConcurrentHashMap<Long, Object> objects =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.CopyOnWriteArrayList<java.util.function.Consumer<AsyncEvent>> asyncListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private final boolean owned;

    private Context(Device device, MemorySegment handle, boolean owned) throws VerbsException {
        super("Context(" + device.name() + ")", null);
        this.device = device;
        this.handle = handle;
        this.owned = owned;
        int rc = Libc.setNonBlocking(EventVerbs.asyncFd(handle)); // processAsyncEvents must never block
        if (rc < 0) {
            if (owned) {
                DeviceVerbs.closeDevice(handle);
            }
            abandon();
            throw VerbsException.of("fcntl", -rc, "O_NONBLOCK on the async event fd");
        }
    }

    /**
     * Opens the named device, or the default one ({@code RDMA4J_DEVICE}, else the first) when
     * {@code deviceName} is null ({@code ibv_get_device_list}, {@code ibv_open_device}).
     *
     * @param deviceName e.g. {@code "rxe0"}, or {@code null}
     * @return the open context
     * @throws VerbsException if the device does not exist or cannot be opened
     * @throws RdmaUnavailableException if libibverbs cannot be loaded
     */
    public static Context open(String deviceName) throws VerbsException {
        Device device = Device.byNameOrDefault(deviceName);
        try {
            return new Context(device, DeviceVerbs.openDevice(device.name()), true);
        } catch (NativeException e) {
            throw VerbsException.from(e);
        }
    }

    /** A context over an ibv_context librdmacm opened (it closes it too): close() frees only rdma4j's side. */
    static Context borrow(MemorySegment ibvContext) throws VerbsException {
        MemorySegment ctx = DeviceVerbs.contextSegment(ibvContext);
        return new Context(Device.of(DeviceVerbs.deviceOf(ctx)), ctx, false);
    }

    /**
     * The device this context was opened on.
     *
     * @return the device
     */
    public Device device() {
        return device;
    }

    /**
     * Queries the device's attributes ({@code ibv_query_device}).
     *
     * @return the attributes
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if closed
     */
    public DeviceAttributes queryDevice() throws VerbsException {
        acquire(false);
        try {
            return DeviceAttributes.of(DeviceVerbs.queryDevice(handle));
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Queries what the device grants beyond {@link #queryDevice()} ({@code ibv_query_device_ex}): on-demand paging,
     * completion timestamps, TSO, RSS, ... ({@code devinfo -v} prints them as {@code ibv_devinfo -v} does).
     *
     * @return the attributes; zeros beyond the base ones when the provider has no {@code query_device_ex}
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if closed
     */
    public ExtendedDeviceAttributes queryDeviceExtended() throws VerbsException {
        acquire(false);
        try {
            return ExtendedDeviceAttributes.of(DeviceVerbs.queryDeviceEx(handle));
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Queries a port ({@code ibv_query_port}, reproducing verbs.h's {@code ___ibv_query_port} inline).
     *
     * @param port the port number, from 1
     * @return the port's attributes
     * @throws VerbsException if the verb fails (e.g. {@code EINVAL} for a port that does not exist)
     * @throws IllegalArgumentException if {@code port} is not in 1..255
     * @throws IllegalStateException if closed
     */
    public PortAttributes queryPort(int port) throws VerbsException {
        checkPort(port);
        acquire(false);
        try {
            return PortAttributes.of(DeviceVerbs.queryPort(handle, port));
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * Reads one GID table entry with its type ({@code ibv_query_gid_ex}; falls back to
     * {@code ibv_query_gid} plus sysfs on libraries older than rdma-core 32).
     *
     * @param port  the port number, from 1
     * @param index the GID index
     * @return the entry
     * @throws VerbsException if the entry is empty or does not exist ({@code ENODATA}/{@code EINVAL})
     * @throws IllegalStateException if closed
     */
    public GidEntry queryGid(int port, int index) throws VerbsException {
        checkPort(port);
        if (index < 0) {
            throw new IllegalArgumentException("GID index must be >= 0: " + index);
        }
        acquire(false);
        try {
            return GidEntry.of(DeviceVerbs.queryGid(handle, device.sysfsPath(), port, index));
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * The port's valid (non-empty) GID table entries, in index order ({@code ibv_query_gid_table}
     * semantics, built from per-index {@code ibv_query_gid_ex} calls).
     *
     * @param port the port number, from 1
     * @return the entries
     * @throws VerbsException if the port cannot be queried
     * @throws IllegalStateException if closed
     */
    public List<GidEntry> gidTable(int port) throws VerbsException {
        checkPort(port);
        acquire(false);
        try {
            return DeviceVerbs.gidTable(handle, device.sysfsPath(), port).stream().map(GidEntry::of).toList();
        } catch (NativeException e) {
            throw VerbsException.from(e);
        } finally {
            release(false);
        }
    }

    /**
     * The GID to address this port with on RoCE, chosen as perftest does: RoCE v2 with an IPv4-mapped
     * address first, then any RoCE v2, then RoCE v1, then IB; within a kind, the lowest index.
     *
     * @param port the port number, from 1
     * @return the best entry
     * @throws VerbsException if the port has no valid GID
     * @throws IllegalStateException if closed
     */
    public GidEntry bestRoceGid(int port) throws VerbsException {
        return gidTable(port).stream()
                .min(Comparator.comparingInt(Context::gidPreference).thenComparingInt(GidEntry::index))
                .orElseThrow(() -> new VerbsException("ibv_query_gid_ex", dev.rdma4j.internal.ffi.CConstants.ENODATA, "No data available",
                        device.name() + " port " + port + " has no valid GID"));
    }

    private static int gidPreference(GidEntry e) {
        return switch (e.type()) {
            case ROCE_V2 -> e.gid().isIpv4Mapped() ? 0 : 1;
            case ROCE_V1 -> 2;
            default -> 3;
        };
    }

    /**
     * The number of completion vectors ({@code ibv_context.num_comp_vectors}).
     *
     * @return at least 1
     */
    public int completionVectorCount() {
        ensureOpen();
        return DeviceVerbs.numCompVectors(handle);
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd}).
     *
     * @return the domain; close it before this context
     * @throws VerbsException if the verb fails
     * @throws IllegalStateException if closed
     */
    public ProtectionDomain allocateProtectionDomain() throws VerbsException {
        return new ProtectionDomain(this);
    }

    /**
     * Creates a completion queue without a completion channel ({@code ibv_create_cq}), for polling.
     *
     * @param minSize the least number of entries; the device may round it up
     * @return the queue; close it before this context
     * @throws VerbsException if the verb fails (e.g. {@code EINVAL} above {@code max_cqe})
     * @throws IllegalStateException if closed
     */
    public CompletionQueue createCompletionQueue(int minSize) throws VerbsException {
        return new CompletionQueue(this, minSize, null, 0);
    }

    /**
     * Creates a completion queue that reports to a completion channel ({@code ibv_create_cq}).
     *
     * @param minSize the least number of entries
     * @param channel the channel (of this context)
     * @param vector  the completion vector, below {@link #completionVectorCount()}
     * @return the queue
     * @throws VerbsException if the verb fails
     */
    public CompletionQueue createCompletionQueue(int minSize, CompletionChannel channel, int vector)
            throws VerbsException {
        if (channel.context() != this) {
            throw new IllegalArgumentException("the channel belongs to another context");
        }
        return new CompletionQueue(this, minSize, channel, vector);
    }

    /**
     * Creates an extended completion queue ({@code ibv_create_cq_ex} with {@code IBV_WC_STANDARD_FLAGS}, and
     * {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP} when asked): polled through {@code ibv_start_poll},
     * {@code ibv_next_poll}, {@code ibv_end_poll} and the {@code ibv_wc_read_*} accessors into the same
     * {@link WorkCompletions} as a plain queue, so queue pairs, {@code CompletionQueue.poll} and the completion engine
     * use it unchanged; with timestamps, {@link WorkCompletions#completionTimestamp} reads them.
     *
     * @param minSize    the least number of entries
     * @param channel    a completion channel of this context, or null
     * @param vector     the completion vector, below {@link #completionVectorCount()}
     * @param timestamps whether entries carry the device's completion timestamp
     * @return the queue
     * @throws VerbsException {@code EOPNOTSUPP} when the device has no completion timestamps and they were asked for
     *                        ({@link ExtendedDeviceAttributes#completionTimestampMask()} is 0), or when the provider
     *                        has no extended CQs; else the verb's errno
     */
    public CompletionQueue createExtendedCompletionQueue(int minSize, CompletionChannel channel, int vector,
            boolean timestamps) throws VerbsException {
        if (channel != null && channel.context() != this) {
            throw new IllegalArgumentException("the channel belongs to another context");
        }
        if (timestamps && queryDeviceExtended().completionTimestampMask() == 0) {
            throw VerbsException.of("ibv_create_cq_ex", dev.rdma4j.internal.ffi.Errno.EOPNOTSUPP, device().name()
                    + " reports no completion timestamps (completion_timestamp_mask 0)");
        }
        return new CompletionQueue(this, minSize, channel, vector, true, timestamps);
    }

    /**
     * Creates a completion channel with a non-blocking fd ({@code ibv_create_comp_channel}).
     *
     * @return the channel
     * @throws VerbsException if the verb fails
     */
    public CompletionChannel createCompletionChannel() throws VerbsException {
        return new CompletionChannel(this);
    }

    /**
     * The context's async event fd ({@code ibv_context.async_fd}), non-blocking: readable when
     * {@link #processAsyncEvents()} has work.
     *
     * @return the fd
     */
    public int asyncEventFd() {
        ensureOpen();
        return EventVerbs.asyncFd(handle);
    }

    /**
     * Reads every pending asynchronous event ({@code ibv_get_async_event}), resolves it to its queue pair / CQ /
     * SRQ / port while it is still unacknowledged (so its element cannot be destroyed and its address reused
     * meanwhile), acknowledges it ({@code ibv_ack_async_event}), and delivers it to that object's listeners and
     * to this context's. Never blocks on the fd.
     *
     * <p>Thread-safe, and a barrier: reading and delivering happen under one lock, which an engine watching
     * this context ({@code engine.watchAsyncEvents}) takes too, so when this call returns every event the
     * device queued before it has been delivered to its listeners, by this thread or by the engine. Async
     * events and completions travel through different fds in no set order: a thread that polled the last
     * completion of a burst calls this to be sure the events that burst raised (e.g. SRQ_LIMIT_REACHED) have
     * been handled. Listeners run under that lock, so they must not wait for another thread that calls it,
     * and must not close this context (refused with {@link IllegalStateException}: the close would wait for
     * this very call); they may close the queue pair, CQ or SRQ an event is about.
     *
     * @return the number of events processed
     */
    public int processAsyncEvents() {
        acquire(false);
        try {
            int n;
            long[] raw = new long[3];
            synchronized (asyncScratch) {
                Thread outer = delivering;
                delivering = Thread.currentThread();
                try {
                    n = readAndDeliver(raw);
                } finally {
                    delivering = outer;
                }
            }
            return n;
        } finally {
            release(false);
        }
    }

    /** Under the async lock, on the delivering thread. */
    private int readAndDeliver(long[] raw) {
        int n = 0;
        while (EventVerbs.nextAsyncEvent(handle, asyncScratch, raw)) {
            AsyncEvent e;
            try {
                // resolved while unacknowledged: its element cannot be destroyed, nor its address reused
                e = resolve((int) raw[0], raw[1], (int) raw[2]);
            } finally {
                // acknowledged before delivery: a listener may destroy the element, which waits for this
                EventVerbs.ackAsyncEvent(asyncScratch);
            }
            deliver(e);
            n++;
        }
        return n;
    }

    /**
     * The natural try-with-resources order closes a {@code CompletionEngine} opened before this context after
     * it: the engine's completion channel (a child of this context) is then still open, though idle once the
     * CQs on it are closed. When such channels are all that is left, they are closed here, so this close
     * succeeds; the engine's epoll set drops a closed fd by itself, and the engine opens a new channel if it
     * is asked for a CQ of this context again (which a closed context refuses).
     */
    @Override
    void closeOwnedIdleDependents() {
        java.util.List<NativeResource> left = dependents();
        if (left.isEmpty()) {
            return;
        }
        for (NativeResource d : left) {
            if (!(d instanceof CompletionChannel ch) || !ch.isIdleEngineChannel()) {
                return; // something else is open: the close is refused, and the engine's channels stay
            }
        }
        for (NativeResource d : left) {
            try {
                d.close();
            } catch (IllegalStateException raced) {
                // a CQ was created on it meanwhile: this close is refused, naming it
            }
        }
    }

    @Override
    void refuseReentrantClose() {
        if (delivering == Thread.currentThread()) {
            throw new IllegalStateException("cannot close " + description() + " from its own async-event listener:"
                    + " processAsyncEvents is in progress on this thread and the close would wait for it forever;"
                    + " close it from another thread once the listener has returned");
        }
    }

    private AsyncEvent resolve(int code, long element, int portNum) {
        AsyncEventType type = AsyncEventType.of(code);
        Object owner = type.element() == AsyncEventType.Element.PORT || type.element() == AsyncEventType.Element.DEVICE
                ? null : objects.get(element);
        return new AsyncEvent(type, owner instanceof QueuePair q ? q : null,
                owner instanceof CompletionQueue c ? c : null,
                owner instanceof SharedReceiveQueue s ? s : null,
                type.element() == AsyncEventType.Element.PORT ? portNum : 0, EventVerbs.eventTypeStr(code));
    }

    private void deliver(AsyncEvent e) {
        if (dev.rdma4j.internal.jfr.Flight.on) {
            Object element = e.queuePair() != null ? e.queuePair() : e.completionQueue() != null ? e.completionQueue()
                    : e.sharedReceiveQueue() != null ? e.sharedReceiveQueue() : e.port() != 0 ? "port " + e.port()
                    : device.name();
            dev.rdma4j.internal.jfr.Flight.asyncEvent(device.name(), e.type().name(), String.valueOf(element));
        }
        if (e.queuePair() != null) {
            e.queuePair().dispatch(e);
        }
        if (e.completionQueue() != null) {
            e.completionQueue().dispatch(e);
        }
        if (e.sharedReceiveQueue() != null) {
            e.sharedReceiveQueue().dispatch(e);
        }
        notifyListeners(asyncListeners, e);
    }

    /**
     * Calls each listener with {@code e}; one that throws is logged (with its identity) and counted, and the
     * others still run: the edge-triggered async fd must be drained whatever a listener does.
     */
    void notifyListeners(Iterable<? extends java.util.function.Consumer<AsyncEvent>> listeners, AsyncEvent e) {
        for (var l : listeners) {
            try {
                l.accept(e);
            } catch (RuntimeException | LinkageError | AssertionError failed) {
                listenerFailures.increment();
                System.getLogger("dev.rdma4j").log(System.Logger.Level.WARNING,
                        () -> "async event listener " + l + " threw on " + e + " (" + description() + ")", failed);
            }
        }
    }

    /**
     * How many times an async-event listener (of this context or of its queue pairs, CQs and SRQs) threw.
     * Such an exception is logged through {@code System.Logger} ("dev.rdma4j") and the other listeners
     * and events are still delivered.
     *
     * @return the count since this context was opened
     */
    public long listenerFailures() {
        return listenerFailures.sum();
    }

    /**
     * Adds a listener for every asynchronous event of this context (port and device events included).
     *
     * @param listener called on the thread running {@link #processAsyncEvents()} (the engine's, if one watches)
     */
    public void addAsyncEventListener(java.util.function.Consumer<AsyncEvent> listener) {
        asyncListeners.add(listener);
    }

    /**
     * Removes a listener.
     *
     * @param listener a listener added before
     */
    public void removeAsyncEventListener(java.util.function.Consumer<AsyncEvent> listener) {
        asyncListeners.remove(listener);
    }

    void register(long address, Object owner) {
        objects.put(address, owner);
    }

    void unregister(long address) {
        objects.remove(address);
    }

    /** The native handle, for the other objects of this package. */
    MemorySegment handle() {
        return handle;
    }

    private static void checkPort(int port) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port numbers run from 1 to 255: " + port);
        }
    }

    @Override
    void destroy() {
        try {
            if (owned) {
                DeviceVerbs.closeDevice(handle);
            }
        } finally {
            arena.close();
        }
    }
}
