package dev.rdma4j.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetSocketAddress;

/** librdmacm ({@code librdmacm.so.1}): event channel, cm ids, address/route resolution, connect/accept. */
@SuppressWarnings("restricted")
public final class RdmaCm {
    public static final String LIBRARY = "librdmacm.so.1";
    public static final int RDMA_PS_TCP = 0x0106;
    /** {@code RDMA_PS_UDP}: datagram (UD) ids, resolved with SIDR, and multicast. */
    public static final int RDMA_PS_UDP = 0x0111;
    /** {@code RDMA_UDP_QKEY}: the Q_Key rdma_cm gives the UD queue pairs of {@link #RDMA_PS_UDP} ids. */
    public static final int RDMA_UDP_QKEY = 0x01234567;
    /** {@code RDMA_CM_JOIN_MC_ATTR_ADDRESS} of {@code enum rdma_cm_join_mc_attr_mask}. */
    public static final int RDMA_CM_JOIN_MC_ATTR_ADDRESS = 1;
    /** {@code RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS}. */
    public static final int RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS = 1 << 1;
    /** {@code RDMA_MC_JOIN_FLAG_FULLMEMBER} of {@code enum rdma_cm_mc_join_flags}. */
    public static final int RDMA_MC_JOIN_FLAG_FULLMEMBER = 0;
    /** {@code RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER}. */
    public static final int RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER = 1;

    public static final StructLayout RDMA_EVENT_CHANNEL = CLayouts.struct("struct rdma_event_channel",
            JAVA_INT.withName("fd"));

    /** {@code struct sockaddr_storage}: room for any address family, 8-aligned. */
    private static MemoryLayout sockaddrStorage(String name) {
        return MemoryLayout.sequenceLayout(128, JAVA_BYTE).withByteAlignment(8).withName(name);
    }

    /**
     * The members of {@code struct rdma_cm_id} rdma4j reads; the rest of the struct is not described. The
     * addresses are what the header's inline {@code rdma_get_local_addr}/{@code rdma_get_peer_addr} return.
     */
    public static final StructLayout RDMA_CM_ID_PREFIX = CLayouts.struct("struct rdma_cm_id (prefix)",
            ADDRESS.withName("verbs"),
            ADDRESS.withName("channel"),
            ADDRESS.withName("context"),
            ADDRESS.withName("qp"),
            CLayouts.struct("struct rdma_route (prefix)",
                    CLayouts.struct("struct rdma_addr (prefix)",
                            CLayouts.union("src", sockaddrStorage("src_storage")).withName("$src"),
                            CLayouts.union("dst", sockaddrStorage("dst_storage")).withName("$dst"))
                            .withName("addr (prefix)")).withName("route (prefix)"));

    public static final StructLayout RDMA_CONN_PARAM = CLayouts.struct("struct rdma_conn_param",
            ADDRESS.withName("private_data"),
            JAVA_BYTE.withName("private_data_len"),
            JAVA_BYTE.withName("responder_resources"),
            JAVA_BYTE.withName("initiator_depth"),
            JAVA_BYTE.withName("flow_control"),
            JAVA_BYTE.withName("retry_count"),
            JAVA_BYTE.withName("rnr_retry_count"),
            JAVA_BYTE.withName("srq"),
            JAVA_INT.withName("qp_num"));

    /** {@code struct rdma_ud_param}: what a UD id's ESTABLISHED and a multicast join deliver. */
    public static final StructLayout RDMA_UD_PARAM = CLayouts.struct("struct rdma_ud_param",
            ADDRESS.withName("private_data"),
            JAVA_BYTE.withName("private_data_len"),
            Structs.IBV_AH_ATTR.withName("ah_attr"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("qkey"));

    /** {@code struct rdma_cm_event}, both members of its {@code param} union. */
    public static final StructLayout RDMA_CM_EVENT = CLayouts.struct("struct rdma_cm_event",
            ADDRESS.withName("id"),
            ADDRESS.withName("listen_id"),
            JAVA_INT.withName("event"),
            JAVA_INT.withName("status"),
            CLayouts.union("union param", RDMA_CONN_PARAM.withName("conn"), RDMA_UD_PARAM.withName("ud"))
                    .withName("param"));

    /** {@code struct rdma_cm_join_mc_attr_ex} of {@code rdma_join_multicast_ex}. */
    public static final StructLayout RDMA_CM_JOIN_MC_ATTR_EX = CLayouts.struct("struct rdma_cm_join_mc_attr_ex",
            JAVA_INT.withName("comp_mask"),
            JAVA_INT.withName("join_flags"),
            ADDRESS.withName("addr"));

    private RdmaCm() {
    }

    private static final class Holder {
        static final SymbolLookup LOOKUP;
        static final Throwable CAUSE;

        static {
            SymbolLookup l = null;
            Throwable c = null;
            try {
                Libibverbs.ensureLoaded();
                l = SymbolLookup.libraryLookup(LIBRARY, Arena.global());
            } catch (IllegalArgumentException | LibraryUnavailableException e) {
                c = e;
            }
            LOOKUP = l;
            CAUSE = c;
        }
    }

    /** Why librdmacm (or libibverbs under it) could not be loaded, or null when it is loaded. */
    public static String failureMessage() {
        if (Holder.CAUSE == null) {
            return null;
        }
        return "rdma_cm is unavailable: cannot load " + LIBRARY
                + " (rdma-core's librdmacm; on Debian/Ubuntu: apt-get install librdmacm1): "
                + Holder.CAUSE.getMessage();
    }

    /** The loader's exception, or null when the library is loaded. */
    public static Throwable failureCause() {
        return Holder.CAUSE;
    }

    private static SymbolLookup lib() {
        if (Holder.CAUSE != null) {
            throw new LibraryUnavailableException(failureMessage(), Holder.CAUSE);
        }
        return Holder.LOOKUP;
    }

    private static final class H {
        static final SymbolLookup L = lib();
        static final MethodHandle CREATE_EVENT_CHANNEL = d("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
        static final MethodHandle DESTROY_EVENT_CHANNEL = Native.downcall(L, "rdma_destroy_event_channel",
                FunctionDescriptor.ofVoid(ADDRESS), false);
        static final MethodHandle CREATE_ID = d("rdma_create_id",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle DESTROY_ID = d("rdma_destroy_id", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle BIND_ADDR = d("rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle LISTEN = d("rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        static final MethodHandle RESOLVE_ADDR = d("rdma_resolve_addr",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
        static final MethodHandle RESOLVE_ROUTE = d("rdma_resolve_route",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        static final MethodHandle CREATE_QP = d("rdma_create_qp",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle DESTROY_QP = Native.downcall(L, "rdma_destroy_qp",
                FunctionDescriptor.ofVoid(ADDRESS), false);
        static final MethodHandle CONNECT = d("rdma_connect", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle ACCEPT = d("rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle REJECT = d("rdma_reject",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
        static final MethodHandle DISCONNECT = d("rdma_disconnect", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle GET_CM_EVENT = d("rdma_get_cm_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle ACK_CM_EVENT = d("rdma_ack_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // __be16 rdma_get_src_port(struct rdma_cm_id *id): reads the id's bound address, no system call
        static final MethodHandle GET_SRC_PORT = Native.downcall(L, "rdma_get_src_port",
                FunctionDescriptor.of(JAVA_SHORT, ADDRESS), false);
        static final MethodHandle JOIN_MULTICAST_EX = d("rdma_join_multicast_ex",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle LEAVE_MULTICAST = d("rdma_leave_multicast",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle EVENT_STR = Native.downcall(L, "rdma_event_str",
                FunctionDescriptor.of(ADDRESS, JAVA_INT), false);

        private static MethodHandle d(String name, FunctionDescriptor fd) {
            return Native.downcall(L, name, fd, true);
        }
    }

    private static void check(String verb, String detail, Native.StatusCall call) throws NativeException {
        lib();
        Native.check(verb, detail, call);
    }

    /** rdma_create_event_channel, with its fd made non-blocking. */
    public static MemorySegment createEventChannel() throws NativeException {
        lib();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(a);
            MemorySegment ch = ((MemorySegment) H.CREATE_EVENT_CHANNEL.invokeExact(errno))
                    .reinterpret(RDMA_EVENT_CHANNEL.byteSize());
            if (ch.address() == 0) {
                throw Native.fail("rdma_create_event_channel", Native.errno(errno), null);
            }
            int rc = Libc.setNonBlocking(channelFd(ch));
            if (rc < 0) {
                H.DESTROY_EVENT_CHANNEL.invokeExact(ch);
                throw Native.fail("fcntl", -rc, "O_NONBLOCK on the rdma_cm event channel");
            }
            return ch;
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static int channelFd(MemorySegment ch) {
        return ch.get(JAVA_INT, 0);
    }

    public static void destroyEventChannel(MemorySegment ch) {
        try {
            H.DESTROY_EVENT_CHANNEL.invokeExact(ch);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static MemorySegment createId(MemorySegment ch) throws NativeException {
        return createId(ch, RDMA_PS_TCP);
    }

    /** {@code rdma_create_id} in a port space ({@link #RDMA_PS_TCP} or {@link #RDMA_PS_UDP}). */
    public static MemorySegment createId(MemorySegment ch, int portSpace) throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check("rdma_create_id", null,
                    e -> (int) H.CREATE_ID.invokeExact(e, ch, out, MemorySegment.NULL, portSpace));
            return idSegment(out.get(ADDRESS, 0));
        }
    }

    public static MemorySegment idSegment(MemorySegment id) {
        return id.reinterpret(RDMA_CM_ID_PREFIX.byteSize());
    }

    public static void destroyId(MemorySegment id) throws NativeException {
        check("rdma_destroy_id", null, e -> (int) H.DESTROY_ID.invokeExact(e, id));
    }

    public static void bindAddr(MemorySegment id, InetSocketAddress addr) throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = sockaddr(a, addr);
            check("rdma_bind_addr", addr.toString(), e -> (int) H.BIND_ADDR.invokeExact(e, id, sa));
        }
    }

    /** The port the id is bound to ({@code rdma_get_src_port}), in host order: the one chosen for port 0. */
    public static int srcPort(MemorySegment id) {
        lib();
        try {
            return Short.toUnsignedInt(Short.reverseBytes((short) H.GET_SRC_PORT.invokeExact(id)));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static void listen(MemorySegment id, int backlog) throws NativeException {
        check("rdma_listen", null, e -> (int) H.LISTEN.invokeExact(e, id, backlog));
    }

    public static void resolveAddr(MemorySegment id, InetSocketAddress dst, int timeoutMs) throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = sockaddr(a, dst);
            check("rdma_resolve_addr", dst.toString(),
                    e -> (int) H.RESOLVE_ADDR.invokeExact(e, id, MemorySegment.NULL, sa, timeoutMs));
        }
    }

    public static void resolveRoute(MemorySegment id, int timeoutMs) throws NativeException {
        check("rdma_resolve_route", null, e -> (int) H.RESOLVE_ROUTE.invokeExact(e, id, timeoutMs));
    }

    public static MemorySegment createQp(MemorySegment id, MemorySegment pd, MemorySegment initAttr)
            throws NativeException {
        check("rdma_create_qp", null, e -> (int) H.CREATE_QP.invokeExact(e, id, pd, initAttr));
        return id.get(ADDRESS, CLayouts.offset(RDMA_CM_ID_PREFIX, "qp")).reinterpret(Structs.IBV_QP.byteSize());
    }

    public static void destroyQp(MemorySegment id) {
        try {
            H.DESTROY_QP.invokeExact(id);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code rdma_get_local_addr} (an inline function of the header: the id's source address). */
    public static InetSocketAddress localAddress(MemorySegment id) {
        return socketAddress(id.asSlice(CLayouts.offset(RDMA_CM_ID_PREFIX, "route (prefix)", "addr (prefix)", "$src",
                "src_storage"), 128));
    }

    /** {@code rdma_get_peer_addr} (an inline function of the header: the id's destination address). */
    public static InetSocketAddress peerAddress(MemorySegment id) {
        return socketAddress(id.asSlice(CLayouts.offset(RDMA_CM_ID_PREFIX, "route (prefix)", "addr (prefix)", "$dst",
                "dst_storage"), 128));
    }

    /** The address in a {@code struct sockaddr_in}/{@code sockaddr_in6}; null for another family. */
    static InetSocketAddress socketAddress(MemorySegment sa) {
        int family = sa.get(ValueLayout.JAVA_SHORT, 0);
        int port = Short.toUnsignedInt(sa.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2));
        try {
            if (family == 2) { // AF_INET
                return new InetSocketAddress(java.net.InetAddress.getByAddress(sa.asSlice(4, 4).toArray(JAVA_BYTE)), port);
            }
            if (family == 10) { // AF_INET6
                return new InetSocketAddress(Inet6Address.getByAddress(null, sa.asSlice(8, 16).toArray(JAVA_BYTE),
                        sa.get(JAVA_INT, 24)), port);
            }
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e); // not for a 4- or 16-byte address
        }
        return null;
    }

    public static MemorySegment verbs(MemorySegment id) {
        return id.get(ADDRESS, CLayouts.offset(RDMA_CM_ID_PREFIX, "verbs"));
    }

    /** Fills a {@code struct rdma_conn_param} (private data copied into {@code arena}). */
    public static MemorySegment connParam(Arena arena, byte[] privateData, int responderResources,
            int initiatorDepth, int retryCount, int rnrRetryCount) {
        MemorySegment p = arena.allocate(RDMA_CONN_PARAM);
        MemoryLayout l = RDMA_CONN_PARAM;
        if (privateData != null && privateData.length > 0) {
            MemorySegment pd = arena.allocate(privateData.length);
            MemorySegment.copy(privateData, 0, pd, JAVA_BYTE, 0, privateData.length);
            p.set(ADDRESS, CLayouts.offset(l, "private_data"), pd);
            p.set(JAVA_BYTE, CLayouts.offset(l, "private_data_len"), (byte) privateData.length);
        }
        p.set(JAVA_BYTE, CLayouts.offset(l, "responder_resources"), (byte) responderResources);
        p.set(JAVA_BYTE, CLayouts.offset(l, "initiator_depth"), (byte) initiatorDepth);
        p.set(JAVA_BYTE, CLayouts.offset(l, "retry_count"), (byte) retryCount);
        p.set(JAVA_BYTE, CLayouts.offset(l, "rnr_retry_count"), (byte) rnrRetryCount);
        return p;
    }

    public static void connect(MemorySegment id, MemorySegment param) throws NativeException {
        check("rdma_connect", null, e -> (int) H.CONNECT.invokeExact(e, id, param));
    }

    public static void accept(MemorySegment id, MemorySegment param) throws NativeException {
        check("rdma_accept", null, e -> (int) H.ACCEPT.invokeExact(e, id, param));
    }

    public static void reject(MemorySegment id, byte[] privateData) throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pd = MemorySegment.NULL;
            if (privateData != null && privateData.length > 0) {
                pd = a.allocate(privateData.length);
                MemorySegment.copy(privateData, 0, pd, JAVA_BYTE, 0, privateData.length);
            }
            MemorySegment data = pd;
            byte len = (byte) (privateData == null ? 0 : privateData.length);
            check("rdma_reject", null, e -> (int) H.REJECT.invokeExact(e, id, data, len));
        }
    }

    public static void disconnect(MemorySegment id) throws NativeException {
        check("rdma_disconnect", null, e -> (int) H.DISCONNECT.invokeExact(e, id));
    }

    /**
     * One CM event, copied out of librdmacm's struct before it is acknowledged. For the events whose
     * {@code param} is {@code struct rdma_ud_param} (a UD id's ESTABLISHED, a multicast join or its error), the
     * UD members are copied too: {@code ahAttr} holds the bytes of its {@code struct ibv_ah_attr} (else null),
     * {@code context} the pointer {@code rdma_join_multicast} was given (a join's token).
     */
    public record Event(long id, long listenId, int type, int status, byte[] privateData, byte[] ahAttr, int qpNum,
            int qkey, long context) {
        /** An event without UD members. */
        public Event(long id, long listenId, int type, int status, byte[] privateData) {
            this(id, listenId, type, status, privateData, null, 0, 0, 0);
        }
    }

    /** rdma_get_cm_event + copy + rdma_ack_cm_event; null when none is pending (EAGAIN). */
    public static Event nextEvent(MemorySegment ch) throws NativeException {
        lib();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(a);
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) H.GET_CM_EVENT.invokeExact(errno, ch, out);
            if (rc != 0) {
                int e = Native.errno(errno);
                if (e == Libc.EAGAIN) {
                    return null;
                }
                throw Native.fail("rdma_get_cm_event", e, null);
            }
            MemorySegment ev = out.get(ADDRESS, 0).reinterpret(RDMA_CM_EVENT.byteSize());
            Event e;
            try {
                e = copy(ev);
            } finally { // acknowledged whatever the copy did: rdma_destroy_id and rdma_leave_multicast wait for it
                int ack = (int) H.ACK_CM_EVENT.invokeExact(errno, ev);
                if (ack != 0) {
                    throw Native.fail("rdma_ack_cm_event", Native.errorCode(ack, Native.errno(errno)), null);
                }
            }
            return e;
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The Java copy of a {@code struct rdma_cm_event}, before it is acknowledged. */
    private static Event copy(MemorySegment ev) {
        MemoryLayout l = RDMA_CM_EVENT;
        int type = ev.get(JAVA_INT, CLayouts.offset(l, "event"));
        long idAddress = ev.get(ValueLayout.JAVA_LONG, CLayouts.offset(l, "id"));
        long listenId = ev.get(ValueLayout.JAVA_LONG, CLayouts.offset(l, "listen_id"));
        int status = ev.get(JAVA_INT, CLayouts.offset(l, "status"));
        // private_data and its length are at the same offsets in both members of the union
        MemorySegment data = ev.get(ADDRESS, CLayouts.offset(l, "param", "conn", "private_data"));
        boolean join = type == CEnums.RDMA_CM_EVENT_MULTICAST_JOIN || type == CEnums.RDMA_CM_EVENT_MULTICAST_ERROR;
        if (join) { // private_data is the join's context (rdma4j's token), never memory to read
            return new Event(idAddress, listenId, type, status, new byte[0], ahAttr(ev), udInt(ev, "qp_num"),
                    udInt(ev, "qkey"), data.address());
        }
        int len = Byte.toUnsignedInt(ev.get(JAVA_BYTE, CLayouts.offset(l, "param", "conn", "private_data_len")));
        byte[] pdata = len == 0 || data.address() == 0 ? new byte[0] : data.reinterpret(len).toArray(JAVA_BYTE);
        if (type == CEnums.RDMA_CM_EVENT_ESTABLISHED) { // a UD id's carries rdma_ud_param (unused for RC)
            return new Event(idAddress, listenId, type, status, pdata, ahAttr(ev), udInt(ev, "qp_num"),
                    udInt(ev, "qkey"), 0);
        }
        return new Event(idAddress, listenId, type, status, pdata);
    }

    private static byte[] ahAttr(MemorySegment ev) {
        long ah = CLayouts.offset(RDMA_CM_EVENT, "param", "ud", "ah_attr");
        return ev.asSlice(ah, Structs.IBV_AH_ATTR.byteSize()).toArray(JAVA_BYTE);
    }

    private static int udInt(MemorySegment ev, String member) {
        return ev.get(JAVA_INT, CLayouts.offset(RDMA_CM_EVENT, "param", "ud", member));
    }

    /**
     * {@code rdma_join_multicast_ex}: joins {@code group} as a full member, or as a send-only one; the
     * MULTICAST_JOIN (or MULTICAST_ERROR) event carries {@code token} as its context.
     */
    public static void joinMulticast(MemorySegment id, InetSocketAddress group, boolean sendOnly, long token)
            throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = sockaddr(a, group);
            MemorySegment attr = a.allocate(RDMA_CM_JOIN_MC_ATTR_EX);
            MemoryLayout l = RDMA_CM_JOIN_MC_ATTR_EX;
            attr.set(JAVA_INT, CLayouts.offset(l, "comp_mask"),
                    RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS);
            attr.set(JAVA_INT, CLayouts.offset(l, "join_flags"),
                    sendOnly ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER : RDMA_MC_JOIN_FLAG_FULLMEMBER);
            attr.set(ADDRESS, CLayouts.offset(l, "addr"), sa);
            MemorySegment context = MemorySegment.ofAddress(token);
            check("rdma_join_multicast_ex", group.getAddress().getHostAddress(),
                    e -> (int) H.JOIN_MULTICAST_EX.invokeExact(e, id, attr, context));
        }
    }

    /** {@code rdma_leave_multicast}. */
    public static void leaveMulticast(MemorySegment id, InetSocketAddress group) throws NativeException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = sockaddr(a, group);
            check("rdma_leave_multicast", group.getAddress().getHostAddress(),
                    e -> (int) H.LEAVE_MULTICAST.invokeExact(e, id, sa));
        }
    }

    public static String eventStr(int type) {
        try {
            return ((MemorySegment) H.EVENT_STR.invokeExact(type)).reinterpret(64).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A {@code struct sockaddr_in} or {@code sockaddr_in6} for {@code addr}. */
    static MemorySegment sockaddr(Arena a, InetSocketAddress addr) {
        if (addr.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address: " + addr);
        }
        if (addr.getAddress() instanceof Inet4Address v4) {
            MemorySegment sa = a.allocate(16, 4);
            sa.set(ValueLayout.JAVA_SHORT, 0, (short) 2); // AF_INET
            sa.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2, (short) addr.getPort());
            MemorySegment.copy(v4.getAddress(), 0, sa, JAVA_BYTE, 4, 4);
            return sa;
        }
        Inet6Address v6 = (Inet6Address) addr.getAddress();
        MemorySegment sa = a.allocate(28, 4);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) 10); // AF_INET6
        sa.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2, (short) addr.getPort());
        MemorySegment.copy(v6.getAddress(), 0, sa, JAVA_BYTE, 8, 16);
        sa.set(JAVA_INT, 24, v6.getScopeId());
        return sa;
    }
}
