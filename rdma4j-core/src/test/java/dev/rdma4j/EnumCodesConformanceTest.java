package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.connect.CmEventType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C value of every constant of the API's enums that stand for a C enum ({@code enum ibv_qp_state},
 * {@code ibv_wc_status}, {@code ibv_wc_opcode}, {@code ibv_mtu}, ..., and rdma_cm's {@code enum rdma_cm_event_type}),
 * as gcc evaluates it against {@code <infiniband/verbs.h>} and {@code <rdma/rdma_cma.h>}, against the code rdma4j
 * passes to C or decodes from it: a code that drifts from the header fails here. Each enum's constants
 * map to their C names by a prefix ({@code QpState.RTS} is {@code IBV_QPS_RTS}); the few that differ are named.
 * {@code UNKNOWN}, rdma4j's own for a value it does not know, is compared only where C has one.
 */
class EnumCodesConformanceTest {
    private record Family<E extends Enum<E>>(Class<E> type, String prefix, ToIntFunction<E> code,
            Map<String, String> renamed, boolean cHasUnknown) {
    }

    private static final List<Family<?>> FAMILIES = List.of(
            new Family<>(QpState.class, "IBV_QPS_", QpState::code, Map.of("ERROR", "IBV_QPS_ERR"), true),
            new Family<>(WcStatus.class, "IBV_WC_", WcStatus::code, Map.of(), false),
            new Family<>(WcOpcode.class, "IBV_WC_", WcOpcode::code, Map.of(), false),
            new Family<>(Mtu.class, "IBV_", Mtu::code, Map.of(), false),
            new Family<>(NodeType.class, "IBV_NODE_", NodeType::code, Map.of(), true),
            new Family<>(PortState.class, "IBV_PORT_", PortState::code, Map.of(), false),
            new Family<>(TransportType.class, "IBV_TRANSPORT_", TransportType::code, Map.of(), true),
            new Family<>(LinkLayer.class, "IBV_LINK_LAYER_", LinkLayer::code, Map.of(), false),
            new Family<>(AtomicCapability.class, "IBV_ATOMIC_", AtomicCapability::code, Map.of(), false),
            new Family<>(GidType.class, "IBV_GID_TYPE_", GidType::code, Map.of(), false),
            new Family<>(QpType.class, "IBV_QPT_", QpType::code, Map.of(), false),
            new Family<>(AccessFlag.class, "IBV_ACCESS_", AccessFlag::bit, Map.of(), false),
            new Family<>(AsyncEventType.class, "IBV_EVENT_", AsyncEventType::code, Map.of(), false),
            new Family<>(CmEventType.class, "RDMA_CM_EVENT_", CmEventType::code, Map.of(), false));

    @Test
    void everyEnumCodeIsCsValue(@TempDir Path dir) throws Exception {
        Map<String, Integer> java = new LinkedHashMap<>();
        for (Family<?> f : FAMILIES) {
            collect(f, java);
        }
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <infiniband/verbs.h>\n#include <rdma/rdma_cma.h>\n"
                + "int main(void) {\n");
        for (String name : java.keySet()) {
            c.append("  printf(\"%s %d\\n\", \"").append(name).append("\", (int)(").append(name).append("));\n");
        }
        c.append("  return 0;\n}\n");
        String out = dev.rdma4j.testing.Gcc.compileAndRun(dir, "enums", c);
        Map<String, Integer> gcc = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.split(" ");
            gcc.put(f[0], Integer.parseInt(f[1]));
        }
        assertThat(java).hasSizeGreaterThan(100);
        List<String> mismatches = new ArrayList<>();
        java.forEach((name, value) -> {
            if (!value.equals(gcc.get(name))) {
                mismatches.add(name + ": java " + value + ", gcc " + gcc.get(name));
            }
        });
        assertThat(mismatches).as("enum constants whose code differs from C's").isEmpty();
    }

    /** The decoders, {@code of(int)}: each constant's code gives it back, and every other code {@code UNKNOWN}. */
    private static final List<Decoder<?>> DECODERS = List.of(
            new Decoder<>(QpState.class, QpState::code, QpState::of, QpState.UNKNOWN),
            new Decoder<>(WcStatus.class, WcStatus::code, WcStatus::of, WcStatus.UNKNOWN),
            new Decoder<>(WcOpcode.class, WcOpcode::code, WcOpcode::of, WcOpcode.UNKNOWN),
            new Decoder<>(Mtu.class, Mtu::code, Mtu::of, Mtu.UNKNOWN),
            new Decoder<>(NodeType.class, NodeType::code, NodeType::of, NodeType.UNKNOWN),
            new Decoder<>(PortState.class, PortState::code, PortState::of, PortState.UNKNOWN),
            new Decoder<>(TransportType.class, TransportType::code, TransportType::of, TransportType.UNKNOWN),
            new Decoder<>(LinkLayer.class, LinkLayer::code, LinkLayer::of, LinkLayer.UNKNOWN),
            new Decoder<>(AtomicCapability.class, AtomicCapability::code, AtomicCapability::of,
                    AtomicCapability.UNKNOWN),
            new Decoder<>(GidType.class, GidType::code, GidType::of, GidType.UNKNOWN),
            new Decoder<>(AsyncEventType.class, AsyncEventType::code, AsyncEventType::of, AsyncEventType.UNKNOWN),
            new Decoder<>(CmEventType.class, CmEventType::code, CmEventType::of, CmEventType.UNKNOWN));

    private record Decoder<E extends Enum<E>>(Class<E> type, ToIntFunction<E> code, IntFunction<E> of, E unknown) {
    }

    @Test
    void ofGivesEachConstantBackForItsCodeAndUnknownForAnyOtherCode() {
        List<String> wrong = new ArrayList<>();
        for (Decoder<?> d : DECODERS) {
            check(d, wrong);
        }
        assertThat(wrong).as("codes of(int) decodes wrongly").isEmpty();
    }

    private static <E extends Enum<E>> void check(Decoder<E> d, List<String> wrong) {
        Map<Integer, E> byCode = new HashMap<>();
        for (E e : d.type().getEnumConstants()) {
            byCode.put(d.code().applyAsInt(e), e);
        }
        for (int code : new int[] {Integer.MIN_VALUE, -2, -1, 1 << 20, Integer.MAX_VALUE}) {
            check(d, code, byCode, wrong);
        }
        for (int code = 0; code < 300; code++) {
            check(d, code, byCode, wrong);
        }
    }

    private static <E extends Enum<E>> void check(Decoder<E> d, int code, Map<Integer, E> byCode, List<String> wrong) {
        E expected = byCode.getOrDefault(code, d.unknown());
        E actual = d.of().apply(code);
        if (actual != expected) {
            wrong.add(d.type().getSimpleName() + ".of(" + code + "): " + actual + ", not " + expected);
        }
    }

    private static <E extends Enum<E>> void collect(Family<E> f, Map<String, Integer> out) {
        for (E e : f.type().getEnumConstants()) {
            if (e.name().equals("UNKNOWN") && !f.cHasUnknown()) {
                continue;
            }
            out.put(f.renamed().getOrDefault(e.name(), f.prefix() + e.name()), f.code().applyAsInt(e));
        }
    }
}
