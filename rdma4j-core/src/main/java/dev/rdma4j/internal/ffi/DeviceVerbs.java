package dev.rdma4j.internal.ffi;

import static dev.rdma4j.internal.ffi.Fields.be64;
import static dev.rdma4j.internal.ffi.Fields.i32;
import static dev.rdma4j.internal.ffi.Fields.i64;
import static dev.rdma4j.internal.ffi.Fields.string;
import static dev.rdma4j.internal.ffi.Fields.u16;
import static dev.rdma4j.internal.ffi.Fields.u32;
import static dev.rdma4j.internal.ffi.Fields.u8;
import static dev.rdma4j.internal.ffi.Structs.IBV_CONTEXT;
import static dev.rdma4j.internal.ffi.Structs.IBV_DEVICE;
import static dev.rdma4j.internal.ffi.Structs.IBV_DEVICE_ATTR;
import static dev.rdma4j.internal.ffi.Structs.IBV_GID;
import static dev.rdma4j.internal.ffi.Structs.IBV_GID_ENTRY;
import static dev.rdma4j.internal.ffi.Structs.IBV_PORT_ATTR;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Device and context verbs: discovery, open/close, device/port/GID queries. */
@SuppressWarnings("restricted")
public final class DeviceVerbs {
    private static final int ENODATA = CConstants.ENODATA;

    private DeviceVerbs() {
    }

    /** Handles, initialised only after {@link Libibverbs#lookup()} succeeded. */
    private static final class H {
        static final SymbolLookup L = Libibverbs.lookup();
        static final MethodHandle GET_DEVICE_LIST = Native.downcall(L, "ibv_get_device_list",
                FunctionDescriptor.of(ADDRESS, ADDRESS), true);
        static final MethodHandle FREE_DEVICE_LIST = Native.downcall(L, "ibv_free_device_list",
                FunctionDescriptor.ofVoid(ADDRESS), false);
        static final MethodHandle GET_DEVICE_NAME = Native.downcall(L, "ibv_get_device_name",
                FunctionDescriptor.of(ADDRESS, ADDRESS), false);
        static final MethodHandle GET_DEVICE_GUID = Native.downcall(L, "ibv_get_device_guid",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS), false);
        static final MethodHandle OPEN_DEVICE = Native.downcall(L, "ibv_open_device",
                FunctionDescriptor.of(ADDRESS, ADDRESS), true);
        static final MethodHandle CLOSE_DEVICE = Native.downcall(L, "ibv_close_device",
                FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        static final MethodHandle QUERY_DEVICE = Native.downcall(L, "ibv_query_device",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
        /** {@code verbs_context->query_device_ex(ctx, input, attr, attr_size)}. */
        static final MethodHandle QUERY_DEVICE_EX_OP = Native.pointerCall(
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
        /** {@code verbs_context->advise_mr(pd, advice, flags, sg_list, num_sge)}. */
        static final MethodHandle ADVISE_MR_OP = Native.pointerCall(
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
        // The exported ibv_query_port is the compat entry point ___ibv_query_port falls back to.
        static final MethodHandle QUERY_PORT_COMPAT = Native.downcall(L, "ibv_query_port",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), true);
        // verbs_context->query_port(context, port_num, port_attr, sizeof(*port_attr))
        static final MethodHandle QUERY_PORT_OP = Native.pointerCall(
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG));
        static final MethodHandle QUERY_GID = Native.downcall(L, "ibv_query_gid",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS), true);
        // rdma-core >= 32; the static inline ibv_query_gid_ex passes sizeof(struct ibv_gid_entry).
        static final MethodHandle QUERY_GID_EX = Native.optionalDowncall(L, "_ibv_query_gid_ex",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
        // rdma-core >= 32: every port's valid entries in one call; the number read, or -errno.
        // ssize_t _ibv_query_gid_table(context, entries, max_entries, flags, entry_size)
        static final MethodHandle QUERY_GID_TABLE = Native.optionalDowncall(L, "_ibv_query_gid_table",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG));
    }

    /** {@code struct ibv_device}'s facts: enum members as their C values. */
    public record DeviceInfo(String name, long guid, int nodeType, int transportType, String sysfsPath) {
    }

    /** {@code struct ibv_device_attr}, member for member ({@code atomic_cap} as its C value). */
    public record DeviceAttrs(
            String fwVer, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap, int vendorId,
            int vendorPartId, int hwVer, int maxQp, int maxQpWr, int deviceCapFlags, int maxSge, int maxSgeRd,
            int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom, int maxEeRdAtom, int maxResRdAtom,
            int maxQpInitRdAtom, int maxEeInitRdAtom, int atomicCap, int maxEe, int maxRdd, int maxMw,
            int maxRawIpv6Qp, int maxRawEthyQp, int maxMcastGrp, int maxMcastQpAttach, int maxTotalMcastQpAttach,
            int maxAh, int maxFmr, int maxMapPerFmr, int maxSrq, int maxSrqWr, int maxSrqSge, int maxPkeys,
            int localCaAckDelay, int physPortCnt) {
    }

    /** {@code struct ibv_port_attr}, member for member ({@code state}, MTUs, {@code link_layer} as C values). */
    public record PortAttrs(
            int state, int maxMtu, int activeMtu, int gidTblLen, int portCapFlags, long maxMsgSz, int badPkeyCntr,
            int qkeyViolCntr, int pkeyTblLen, int lid, int smLid, int lmc, int maxVlNum, int smSl,
            int subnetTimeout, int initTypeReply, int activeWidth, int activeSpeed, int physState, int linkLayer,
            int flags, int portCapFlags2) {
    }

    /** A valid GID table entry: {@code raw} is the 16 bytes, {@code gidType} an {@code enum ibv_gid_type} value. */
    public record GidInfo(int port, int index, byte[] raw, int gidType, int ndevIfindex) {
    }

    private static H h() {
        Libibverbs.ensureLoaded(); // a clean RdmaUnavailableException, never an ExceptionInInitializerError
        return null;
    }

    public static List<DeviceInfo> listDevices() throws NativeException {
        h();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) H.GET_DEVICE_LIST.invokeExact(errno, num);
            if (list.equals(MemorySegment.NULL)) {
                throw Native.fail("ibv_get_device_list", Native.errno(errno), null);
            }
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment array = list.reinterpret(ADDRESS.byteSize() * n);
                List<DeviceInfo> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(device(array.getAtIndex(ADDRESS, i)));
                }
                return List.copyOf(out);
            } finally {
                H.FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** What a {@code struct ibv_device *} describes. */
    private static DeviceInfo device(MemorySegment ibvDevice) throws Throwable {
        MemorySegment dev = ibvDevice.reinterpret(IBV_DEVICE.byteSize());
        MemorySegment name = (MemorySegment) H.GET_DEVICE_NAME.invokeExact(dev);
        long guid = (long) H.GET_DEVICE_GUID.invokeExact(dev);
        return new DeviceInfo(name.reinterpret(64).getString(0), Fields.be64ToHost(guid),
                i32(dev, IBV_DEVICE, "node_type"), i32(dev, IBV_DEVICE, "transport_type"),
                string(dev, IBV_DEVICE, "ibdev_path"));
    }

    /**
     * The device an open context is on ({@code context->device}), without listing the devices: librdmacm hands
     * out contexts it opened, one per connection event, and {@code ibv_get_device_list} rescans sysfs each time.
     */
    public static DeviceInfo deviceOf(MemorySegment ctx) {
        h();
        try {
            return device(ctx.get(ADDRESS, CLayouts.offset(IBV_CONTEXT, "device")));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Opens the device by name; the returned segment spans {@code struct ibv_context}. */
    public static MemorySegment openDevice(String name) throws NativeException {
        h();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) H.GET_DEVICE_LIST.invokeExact(errno, num);
            if (list.equals(MemorySegment.NULL)) {
                throw Native.fail("ibv_get_device_list", Native.errno(errno), null);
            }
            try {
                MemorySegment array = list.reinterpret(ADDRESS.byteSize() * num.get(JAVA_INT, 0));
                for (int i = 0; i < num.get(JAVA_INT, 0); i++) {
                    MemorySegment dev = array.getAtIndex(ADDRESS, i);
                    MemorySegment devName = (MemorySegment) H.GET_DEVICE_NAME.invokeExact(dev);
                    if (devName.reinterpret(64).getString(0).equals(name)) {
                        MemorySegment ctx = (MemorySegment) H.OPEN_DEVICE.invokeExact(errno, dev);
                        if (ctx.equals(MemorySegment.NULL)) {
                            throw Native.fail("ibv_open_device", Native.errno(errno), name);
                        }
                        return ctx.reinterpret(IBV_CONTEXT.byteSize());
                    }
                }
                throw Native.fail("ibv_open_device", CConstants.ENODEV, "no RDMA device named " + name);
            } finally {
                H.FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** ibv_close_device; failures are reported but the handle is gone either way. */
    public static void closeDevice(MemorySegment ctx) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            int rc = (int) H.CLOSE_DEVICE.invokeExact(errno, ctx);
            if (rc != 0) {
                throw new IllegalStateException(Native.fail("ibv_close_device",
                        Native.errorCode(rc, Native.errno(errno)), null).getMessage());
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A raw ibv_context pointer as a segment spanning the struct. */
    public static MemorySegment contextSegment(MemorySegment ptr) {
        return ptr.reinterpret(IBV_CONTEXT.byteSize());
    }

    /** {@code context->num_comp_vectors}: how many completion vectors an open context has. */
    public static int numCompVectors(MemorySegment ctx) {
        return i32(ctx, IBV_CONTEXT, "num_comp_vectors");
    }

    public static DeviceAttrs queryDevice(MemorySegment ctx) throws NativeException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment a = arena.allocate(IBV_DEVICE_ATTR);
            int rc = (int) H.QUERY_DEVICE.invokeExact(errno, ctx, a);
            if (rc != 0) {
                throw Native.fail("ibv_query_device", Native.errorCode(rc, Native.errno(errno)), null);
            }
            return attrs(a);
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static DeviceAttrs attrs(MemorySegment a) {
        var l = IBV_DEVICE_ATTR;
        return new DeviceAttrs(string(a, l, "fw_ver"), be64(a, l, "node_guid"),
                be64(a, l, "sys_image_guid"), i64(a, l, "max_mr_size"), i64(a, l, "page_size_cap"),
                i32(a, l, "vendor_id"), i32(a, l, "vendor_part_id"), i32(a, l, "hw_ver"), i32(a, l, "max_qp"),
                i32(a, l, "max_qp_wr"), i32(a, l, "device_cap_flags"), i32(a, l, "max_sge"),
                i32(a, l, "max_sge_rd"), i32(a, l, "max_cq"), i32(a, l, "max_cqe"), i32(a, l, "max_mr"),
                i32(a, l, "max_pd"), i32(a, l, "max_qp_rd_atom"), i32(a, l, "max_ee_rd_atom"),
                i32(a, l, "max_res_rd_atom"), i32(a, l, "max_qp_init_rd_atom"),
                i32(a, l, "max_ee_init_rd_atom"), i32(a, l, "atomic_cap"),
                i32(a, l, "max_ee"), i32(a, l, "max_rdd"), i32(a, l, "max_mw"), i32(a, l, "max_raw_ipv6_qp"),
                i32(a, l, "max_raw_ethy_qp"), i32(a, l, "max_mcast_grp"), i32(a, l, "max_mcast_qp_attach"),
                i32(a, l, "max_total_mcast_qp_attach"), i32(a, l, "max_ah"), i32(a, l, "max_fmr"),
                i32(a, l, "max_map_per_fmr"), i32(a, l, "max_srq"), i32(a, l, "max_srq_wr"),
                i32(a, l, "max_srq_sge"), u16(a, l, "max_pkeys"), u8(a, l, "local_ca_ack_delay"),
                u8(a, l, "phys_port_cnt"));
    }

    /**
     * {@code struct ibv_device_attr_ex} beyond {@code orig_attr}, member for member (nested structs flattened in
     * order); all 0 when the provider has no {@code query_device_ex} ({@code extended} false).
     */
    public record DeviceAttrsEx(DeviceAttrs base, boolean extended, long odpGeneralCaps, int rcOdpCaps, int ucOdpCaps,
            int udOdpCaps, int xrcOdpCaps, long completionTimestampMask, long hcaCoreClock, long deviceCapFlagsEx,
            int maxTso, int tsoSupportedQpts, int rssSupportedQpts, int maxRwqIndirectionTables,
            int maxRwqIndirectionTableSize, long rxHashFieldsMask, int rxHashFunction, int maxWqTypeRq,
            int qpRateLimitMin, int qpRateLimitMax, int packetPacingSupportedQpts, int rawPacketCaps,
            int maxRndvHdrSize, int maxNumTags, int tmFlags, int tmMaxOps, int tmMaxSge, int maxCqCount,
            int maxCqPeriod, long maxDmSize, int pciFetchAdd, int pciSwap, int pciCompareSwap, int physPortCntEx) {
    }

    /**
     * verbs.h's {@code ibv_query_device_ex(ctx, NULL, attr)}: the provider's {@code query_device_ex}, or, when it
     * has none (or it answers {@code EOPNOTSUPP}/{@code ENOSYS}), {@code ibv_query_device} with the rest zero.
     */
    public static DeviceAttrsEx queryDeviceEx(MemorySegment ctx) throws NativeException {
        MemorySegment op = verbsContextOp(ctx, Structs.VERBS_CONTEXT_QUERY_DEVICE_EX_OFFSET);
        if (op == null) {
            return legacy(ctx);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(Structs.IBV_DEVICE_ATTR_EX);
            int rc = (int) H.QUERY_DEVICE_EX_OP.invokeExact(op, ctx, MemorySegment.NULL, a,
                    Structs.IBV_DEVICE_ATTR_EX.byteSize());
            if (rc == Errno.EOPNOTSUPP || rc == 38 /* ENOSYS */) {
                return legacy(ctx);
            }
            if (rc != 0) {
                throw Native.fail("ibv_query_device_ex", Native.errorCode(rc, 0), null);
            }
            var x = Structs.IBV_DEVICE_ATTR_EX;
            return new DeviceAttrsEx(attrs(a.asSlice(0, IBV_DEVICE_ATTR.byteSize())), true,
                    at64(a, "odp_caps", "general_caps"), at32(a, "odp_caps", "per_transport_caps", "rc_odp_caps"),
                    at32(a, "odp_caps", "per_transport_caps", "uc_odp_caps"),
                    at32(a, "odp_caps", "per_transport_caps", "ud_odp_caps"), at32(a, "xrc_odp_caps"),
                    at64(a, "completion_timestamp_mask"), at64(a, "hca_core_clock"), at64(a, "device_cap_flags_ex"),
                    at32(a, "tso_caps", "max_tso"), at32(a, "tso_caps", "supported_qpts"),
                    at32(a, "rss_caps", "supported_qpts"), at32(a, "rss_caps", "max_rwq_indirection_tables"),
                    at32(a, "rss_caps", "max_rwq_indirection_table_size"), at64(a, "rss_caps", "rx_hash_fields_mask"),
                    Byte.toUnsignedInt(a.get(JAVA_BYTE, CLayouts.offset(x, "rss_caps", "rx_hash_function"))),
                    at32(a, "max_wq_type_rq"), at32(a, "packet_pacing_caps", "qp_rate_limit_min"),
                    at32(a, "packet_pacing_caps", "qp_rate_limit_max"),
                    at32(a, "packet_pacing_caps", "supported_qpts"), at32(a, "raw_packet_caps"),
                    at32(a, "tm_caps", "max_rndv_hdr_size"), at32(a, "tm_caps", "max_num_tags"),
                    at32(a, "tm_caps", "flags"), at32(a, "tm_caps", "max_ops"), at32(a, "tm_caps", "max_sge"),
                    at16(a, "cq_mod_caps", "max_cq_count"), at16(a, "cq_mod_caps", "max_cq_period"),
                    at64(a, "max_dm_size"), at16(a, "pci_atomic_caps", "fetch_add"), at16(a, "pci_atomic_caps", "swap"),
                    at16(a, "pci_atomic_caps", "compare_swap"), at32(a, "phys_port_cnt_ex"));
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static DeviceAttrsEx legacy(MemorySegment ctx) throws NativeException {
        return new DeviceAttrsEx(queryDevice(ctx), false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    private static long at64(MemorySegment a, String... path) {
        return a.get(JAVA_LONG, CLayouts.offset(Structs.IBV_DEVICE_ATTR_EX, path));
    }

    private static int at32(MemorySegment a, String... path) {
        return a.get(JAVA_INT, CLayouts.offset(Structs.IBV_DEVICE_ATTR_EX, path));
    }

    private static int at16(MemorySegment a, String... path) {
        return Short.toUnsignedInt(a.get(java.lang.foreign.ValueLayout.JAVA_SHORT,
                CLayouts.offset(Structs.IBV_DEVICE_ATTR_EX, path)));
    }

    /**
     * verbs.h's {@code ibv_advise_mr(pd, advice, flags, sg_list, 1)}: 0 or the errno ({@code EOPNOTSUPP} when the
     * provider has no {@code advise_mr}).
     */
    public static int adviseMr(MemorySegment pd, int advice, int flags, long addr, int length, int lkey) {
        MemorySegment ctx = pd.get(ADDRESS, CLayouts.offset(Structs.IBV_PD, "context"))
                .reinterpret(IBV_CONTEXT.byteSize());
        MemorySegment op = verbsContextOp(ctx, Structs.VERBS_CONTEXT_ADVISE_MR_OFFSET);
        if (op == null) {
            return Errno.EOPNOTSUPP;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sge = arena.allocate(Structs.IBV_SGE);
            WrView.sge(sge, 0, addr, length, lkey);
            return (int) H.ADVISE_MR_OP.invokeExact(op, pd, advice, flags, sge, 1);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Reproduces verbs.h's {@code ___ibv_query_port}: when the context is an extended
     * {@code verbs_context} ({@code abi_compat == __VERBS_ABI_IS_EXTENDED}) large enough to hold
     * {@code query_port} and the op is set, call it with {@code sizeof(struct ibv_port_attr)}; otherwise
     * zero the struct and call the exported compat {@code ibv_query_port}.
     */
    public static PortAttrs queryPort(MemorySegment ctx, int port) throws NativeException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment a = arena.allocate(IBV_PORT_ATTR); // zeroed
            MemorySegment op = queryPortOp(ctx);
            int rc = op != null
                    ? (int) H.QUERY_PORT_OP.invokeExact(op, ctx, (byte) port, a, IBV_PORT_ATTR.byteSize())
                    : (int) H.QUERY_PORT_COMPAT.invokeExact(errno, ctx, (byte) port, a);
            if (rc != 0) {
                throw Native.fail("ibv_query_port", Native.errorCode(rc, Native.errno(errno)), "port " + port);
            }
            var l = IBV_PORT_ATTR;
            return new PortAttrs(i32(a, l, "state"), i32(a, l, "max_mtu"), i32(a, l, "active_mtu"),
                    i32(a, l, "gid_tbl_len"), i32(a, l, "port_cap_flags"),
                    u32(a, l, "max_msg_sz"), i32(a, l, "bad_pkey_cntr"), i32(a, l, "qkey_viol_cntr"),
                    u16(a, l, "pkey_tbl_len"), u16(a, l, "lid"), u16(a, l, "sm_lid"), u8(a, l, "lmc"),
                    u8(a, l, "max_vl_num"), u8(a, l, "sm_sl"), u8(a, l, "subnet_timeout"),
                    u8(a, l, "init_type_reply"), u8(a, l, "active_width"), u8(a, l, "active_speed"),
                    u8(a, l, "phys_state"), u8(a, l, "link_layer"), u8(a, l, "flags"),
                    u16(a, l, "port_cap_flags2"));
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** verbs_get_ctx_op(ctx, query_port), or null when the compat path must be taken. */
    private static MemorySegment queryPortOp(MemorySegment ctx) {
        return verbsContextOp(ctx, Structs.VERBS_CONTEXT_QUERY_PORT_OFFSET);
    }

    /**
     * verbs.h's {@code verbs_get_ctx_op(ctx, op)}: the function pointer at {@code offset} in the context's
     * {@code struct verbs_context}, or null when the context is not an extended one
     * ({@code abi_compat != __VERBS_ABI_IS_EXTENDED}), is too small to hold it (older provider), or has none.
     *
     * @param ctx    the {@code struct ibv_context}
     * @param offset {@code offsetof(struct verbs_context, op)}
     * @return the op, or null
     */
    public static MemorySegment verbsContextOp(MemorySegment ctx, long offset) {
        long abiCompat = ctx.reinterpret(IBV_CONTEXT.byteSize()).get(ADDRESS, CLayouts.offset(IBV_CONTEXT, "abi_compat"))
                .address();
        if (abiCompat != -1L) { // __VERBS_ABI_IS_EXTENDED is (void *)UINTPTR_MAX
            return null;
        }
        long vctxSize = Structs.VERBS_CONTEXT_CONTEXT_OFFSET + IBV_CONTEXT.byteSize();
        MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - Structs.VERBS_CONTEXT_CONTEXT_OFFSET)
                .reinterpret(vctxSize);
        long sz = vctx.get(JAVA_LONG, Structs.VERBS_CONTEXT_SZ_OFFSET);
        if (sz < vctxSize - offset) {
            return null;
        }
        MemorySegment op = vctx.get(ADDRESS, offset);
        return op.equals(MemorySegment.NULL) ? null : op;
    }

    public static GidInfo queryGid(MemorySegment ctx, String sysfsPath, int port, int index) throws NativeException {
        GidInfo e = queryGidOrNull(ctx, sysfsPath, port, index, true);
        if (e == null) {
            throw Native.fail("ibv_query_gid", ENODATA, "port " + port + " index " + index + " is empty");
        }
        return e;
    }

    /**
     * The entry, or null when it is empty: ENODATA (or EINVAL from older kernels) from {@code ibv_query_gid_ex}, a
     * zero GID from {@code ibv_query_gid}; other errors throw unless {@code strict} is false and the errno is one of
     * those.
     */
    private static GidInfo queryGidOrNull(MemorySegment ctx, String sysfsPath, int port, int index, boolean strict)
            throws NativeException {
        try (Arena arena = Arena.ofConfined()) {
            if (H.QUERY_GID_EX != null) {
                MemorySegment e = arena.allocate(IBV_GID_ENTRY);
                int rc = (int) H.QUERY_GID_EX.invokeExact(ctx, port, index, e, 0, IBV_GID_ENTRY.byteSize());
                if (rc != 0) {
                    int errno = Native.errorCode(rc, 0);
                    if (!strict && (errno == ENODATA || errno == CConstants.EINVAL)) {
                        return null;
                    }
                    throw Native.fail("ibv_query_gid_ex", errno, "port " + port + " index " + index);
                }
                return new GidInfo(port, index, e.asSlice(0, IBV_GID.byteSize()).toArray(JAVA_BYTE),
                        i32(e, IBV_GID_ENTRY, "gid_type"), i32(e, IBV_GID_ENTRY, "ndev_ifindex"));
            }
            MemorySegment errno = Native.errnoSlot(arena);
            MemorySegment g = arena.allocate(IBV_GID);
            int rc = (int) H.QUERY_GID.invokeExact(errno, ctx, (byte) port, index, g);
            if (rc != 0) {
                int code = Native.errorCode(rc, Native.errno(errno));
                if (!strict && (code == ENODATA || code == CConstants.EINVAL)) {
                    return null;
                }
                throw Native.fail("ibv_query_gid", code, "port " + port + " index " + index);
            }
            byte[] gid = g.toArray(JAVA_BYTE);
            if (isZero(gid)) {
                return null;
            }
            return new GidInfo(port, index, gid, sysfsGidType(sysfsPath, port, index), 0);
        } catch (NativeException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * The port's valid GID entries in index order. With rdma-core 32 or later one {@code ibv_query_gid_table} call
     * (one system call for every port's table); before, one query per index, the empty ones skipped without an
     * exception (rxe's table has 1,024 entries, almost all empty: a thrown and caught exception each cost tens of
     * milliseconds per table in the emulated guest).
     */
    public static List<GidInfo> gidTable(MemorySegment ctx, String sysfsPath, int port) throws NativeException {
        int length = queryPort(ctx, port).gidTblLen();
        if (H.QUERY_GID_TABLE != null) {
            return gidTableInOneCall(ctx, port, length);
        }
        List<GidInfo> out = new ArrayList<>();
        for (int i = 0; i < length; i++) {
            GidInfo e = queryGidOrNull(ctx, sysfsPath, port, i, false);
            if (e != null) {
                out.add(e);
            }
        }
        return List.copyOf(out);
    }

    private static List<GidInfo> gidTableInOneCall(MemorySegment ctx, int port, int length) throws NativeException {
        // The table covers every port; the kernel refuses (EINVAL) a max_entries below the number of valid
        // entries, so a device with several ports may need a larger array.
        for (long max = Math.max(length, 16);; max *= 2) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment entries = arena.allocate(IBV_GID_ENTRY, max);
                long n = (long) H.QUERY_GID_TABLE.invokeExact(ctx, entries, max, 0, IBV_GID_ENTRY.byteSize());
                if (n >= 0) {
                    List<GidInfo> out = new ArrayList<>();
                    for (long k = 0; k < n; k++) {
                        MemorySegment e = entries.asSlice(k * IBV_GID_ENTRY.byteSize(), IBV_GID_ENTRY);
                        if (i32(e, IBV_GID_ENTRY, "port_num") == port) {
                            out.add(new GidInfo(port, i32(e, IBV_GID_ENTRY, "gid_index"),
                                    e.asSlice(0, IBV_GID.byteSize()).toArray(JAVA_BYTE),
                                    i32(e, IBV_GID_ENTRY, "gid_type"),
                                    i32(e, IBV_GID_ENTRY, "ndev_ifindex")));
                        }
                    }
                    out.sort(java.util.Comparator.comparingInt(GidInfo::index));
                    return List.copyOf(out);
                }
                if (n != -22 || max >= 1L << 20) {
                    throw Native.fail("ibv_query_gid_table", (int) -n, "max_entries " + max);
                }
            } catch (NativeException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }

    private static boolean isZero(byte[] gid) {
        for (byte b : gid) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** Pre-rdma-core-32 fallback: the kernel names the type in sysfs ("IB/RoCE v1" or "RoCE v2"). */
    private static int sysfsGidType(String sysfsPath, int port, int index) {
        Path p = Path.of(sysfsPath, "ports", Integer.toString(port), "gid_attrs", "types",
                Integer.toString(index));
        try {
            String t = Files.readString(p).trim();
            return t.equals("RoCE v2") ? CEnums.IBV_GID_TYPE_ROCE_V2
                    : t.contains("RoCE") ? CEnums.IBV_GID_TYPE_ROCE_V1 : CEnums.IBV_GID_TYPE_IB;
        } catch (IOException e) {
            return CEnums.IBV_GID_TYPE_IB;
        }
    }
}
