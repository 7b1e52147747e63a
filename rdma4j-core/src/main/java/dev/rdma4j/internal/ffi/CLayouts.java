package dev.rdma4j.internal.ffi;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds C-shaped layouts from named members, inserting the padding a C compiler would (x86-64 SysV),
 * so the hand-written structs read like their headers. {@code LayoutConformanceTest} checks every
 * named member against gcc's {@code offsetof}/{@code sizeof}.
 */
public final class CLayouts {
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG;
    public static final java.lang.foreign.AddressLayout PTR = ValueLayout.ADDRESS;

    private CLayouts() {
    }

    /** A struct named like its C type ({@code "struct ibv_port_attr"}), members in declaration order. */
    public static StructLayout struct(String cName, MemoryLayout... members) {
        List<MemoryLayout> out = new ArrayList<>();
        long offset = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            long a = m.byteAlignment();
            long pad = (a - offset % a) % a;
            if (pad > 0) {
                out.add(MemoryLayout.paddingLayout(pad));
                offset += pad;
            }
            out.add(m);
            offset += m.byteSize();
            align = Math.max(align, a);
        }
        long tail = (align - offset % align) % align;
        if (tail > 0) {
            out.add(MemoryLayout.paddingLayout(tail));
        }
        return MemoryLayout.structLayout(out.toArray(MemoryLayout[]::new)).withName(cName);
    }

    /** A union named like its C type. */
    public static GroupLayout union(String cName, MemoryLayout... members) {
        return MemoryLayout.unionLayout(members).withName(cName);
    }

    /** {@code char name[n]}. */
    public static MemoryLayout chars(String name, long n) {
        return MemoryLayout.sequenceLayout(n, ValueLayout.JAVA_BYTE).withName(name);
    }

    /** An opaque blob with the C type's size and alignment (e.g. {@code pthread_mutex_t}). */
    public static MemoryLayout opaque(String name, long size, long alignment) {
        return MemoryLayout.sequenceLayout(size / alignment, alignment == 8 ? ValueLayout.JAVA_LONG
                : alignment == 4 ? ValueLayout.JAVA_INT : ValueLayout.JAVA_BYTE).withName(name);
    }

    /** Function pointers, each named like the C member. */
    public static MemoryLayout[] pointers(String... names) {
        MemoryLayout[] out = new MemoryLayout[names.length];
        for (int i = 0; i < names.length; i++) {
            out[i] = PTR.withName(names[i]);
        }
        return out;
    }

    /** Byte offset of a (possibly nested) member, e.g. {@code offset(IBV_CONTEXT, "ops", "poll_cq")}. */
    public static long offset(MemoryLayout layout, String... path) {
        MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = MemoryLayout.PathElement.groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }
}
