package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C value of every constant of the API's enums that stand for a C enum ({@code enum ibv_qp_state},
 * {@code ibv_wc_status}, {@code ibv_wc_opcode}, {@code ibv_mtu}, ...), as gcc evaluates it against
 * {@code <infiniband/verbs.h>}, against the code rdma4j passes to C or decodes from it: a constant whose C value is
 * its declaration order, or a code written by hand, that drifts from the header fails here. Each enum's constants
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
            new Family<>(AsyncEventType.class, "IBV_EVENT_", AsyncEventType::ordinal, Map.of(), false));

    @Test
    void everyEnumCodeIsCsValue(@TempDir Path dir) throws Exception {
        Map<String, Integer> java = new LinkedHashMap<>();
        for (Family<?> f : FAMILIES) {
            collect(f, java);
        }
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <infiniband/verbs.h>\nint main(void) {\n");
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

    private static <E extends Enum<E>> void collect(Family<E> f, Map<String, Integer> out) {
        for (E e : f.type().getEnumConstants()) {
            if (e.name().equals("UNKNOWN") && !f.cHasUnknown()) {
                continue;
            }
            out.put(f.renamed().getOrDefault(e.name(), f.prefix() + e.name()), f.code().applyAsInt(e));
        }
    }
}
