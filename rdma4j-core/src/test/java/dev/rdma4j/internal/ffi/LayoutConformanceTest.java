package dev.rdma4j.internal.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C program against the real {@code <infiniband/verbs.h>} that prints gcc's offsetof/sizeof
 * for every named member of every hand-written layout, and compares them with the Java layouts.
 */
class LayoutConformanceTest {

    record Member(String type, String path, long offset, long size) {
    }

    @Test
    void everyHandWrittenLayoutMatchesGcc(@TempDir Path dir) throws Exception {
        List<Member> members = new ArrayList<>();
        List<MemoryLayout> layouts = new ArrayList<>(Structs.all());
        layouts.add(Libc.EPOLL_EVENT);
        layouts.add(Libc.POLLFD);
        layouts.add(RdmaCm.RDMA_EVENT_CHANNEL);
        layouts.add(RdmaCm.RDMA_CM_ID_PREFIX);
        layouts.add(RdmaCm.RDMA_CONN_PARAM);
        layouts.add(RdmaCm.RDMA_UD_PARAM);
        layouts.add(RdmaCm.RDMA_CM_EVENT);
        layouts.add(RdmaCm.RDMA_CM_JOIN_MC_ATTR_EX);
        for (MemoryLayout layout : layouts) {
            String name = layout.name().orElseThrow();
            String type = name.replace(" (prefix)", "");
            if (!name.endsWith("(prefix)")) { // a prefix describes only the leading members it names
                members.add(new Member(type, "", 0, layout.byteSize()));
            }
            collect(type, (GroupLayout) layout, "", 0, members);
        }
        StringBuilder c = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <errno.h>
                #include <fcntl.h>
                #include <sys/eventfd.h>
                #include <sys/epoll.h>
                #include <poll.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                int main(void) {
                """);
        for (Member m : members) {
            if (m.path.isEmpty()) {
                c.append("  printf(\"%s|%s|0|%zu\\n\", \"").append(m.type).append("\", \"\", sizeof(")
                        .append(m.type).append("));\n");
            } else {
                c.append("  printf(\"%s|%s|%zu|%zu\\n\", \"").append(m.type).append("\", \"").append(m.path)
                        .append("\", offsetof(").append(m.type).append(", ").append(m.path).append("), sizeof(((")
                        .append(m.type).append(" *)0)->").append(m.path).append("));\n");
            }
        }
        List<Object[]> constants = new ArrayList<>(Structs.constants());
        constants.addAll(CConstants.all());
        for (Object[] constant : constants) {
            c.append("  printf(\"const|%s|%ld|0\\n\", \"").append(constant[0]).append("\", (long)(")
                    .append(constant[0]).append("));\n");
        }
        c.append("  return 0;\n}\n");
        String out = dev.rdma4j.testing.Gcc.compileAndRun(dir, "layouts", c);

        Map<String, String> gcc = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.split("\\|");
            gcc.put(f[0] + "|" + f[1], f[2] + "|" + f[3]);
        }
        Map<String, String> java = new LinkedHashMap<>();
        for (Member m : members) {
            java.put(m.type + "|" + m.path, m.offset + "|" + m.size);
        }
        for (Object[] constant : constants) {
            java.put("const|" + constant[0], constant[1] + "|0");
        }
        assertThat(members).hasSizeGreaterThan(100);
        List<String> mismatches = new ArrayList<>();
        java.forEach((k, v) -> {
            if (!v.equals(gcc.get(k))) {
                mismatches.add(k + ": java " + v + ", gcc " + gcc.get(k));
            }
        });
        assertThat(mismatches).as("members whose (offset|size) differ from gcc's").isEmpty();
        assertThat(java.keySet()).containsExactlyInAnyOrderElementsOf(gcc.keySet());
    }

    private static void collect(String type, GroupLayout group, String prefix, long base, List<Member> out) {
        long offset = 0;
        for (MemoryLayout m : group.memberLayouts()) {
            long at = group instanceof java.lang.foreign.UnionLayout ? 0 : offset;
            if (!(m instanceof PaddingLayout)) {
                String name = m.name().orElseThrow(() -> new AssertionError("unnamed member in " + type));
                if (name.startsWith("$")) { // a C anonymous union: its members belong to the enclosing struct
                    collect(type, (GroupLayout) m, prefix, base + at, out);
                    offset += m.byteSize();
                    continue;
                }
                boolean partial = name.endsWith(" (prefix)"); // partially described: no comparable size
                String path = prefix + name.replace(" (prefix)", "");
                if (!partial) { // a partially described nested struct/union has no comparable size
                    out.add(new Member(type, path, base + at, m.byteSize()));
                }
                if (m instanceof GroupLayout nested) {
                    collect(type, nested, path + ".", base + at, out);
                }
            }
            offset += m.byteSize();
        }
    }
}
