package dev.rdma4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rdma4j.internal.ffi.Errno;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 31, "C in one room": the core's code outside {@code internal.ffi} writes no C constant. Its sources, with
 * comments and string literals left out, name a C constant ({@code IBV_*}, {@code RDMA_CM_*}, {@code IB_CM_*},
 * {@code EPOLL*}, {@code EFD_*}, an errno of {@link Errno}) only qualified by a class of {@code internal.ffi}
 * ({@code CEnums.IBV_QPS_RESET}) or as a class's own alias of one ({@code static final int EINVAL =
 * CConstants.EINVAL;}), no string is a C constant's name (a name table: {@code Map.entry(1, "EPERM")}), and no enum
 * constant takes a number as its code ({@code RC(2)}): the numbers are
 * in {@code internal.ffi}, where gcc checks them. (That no C member is named outside it is ArchitectureTest's.)
 */
class CNumbersOutsideFfiTest {
    private static final Path MAIN = Path.of("src/main/java");
    private static final Path FFI = MAIN.resolve("dev/rdma4j/internal/ffi");

    @Test
    void noCConstantIsWrittenOutsideTheFfiRoom() throws IOException {
        Set<String> ffiClasses = ffiClasses();
        Pattern cName = cNames();
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(MAIN)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.startsWith(FFI))::iterator) {
                String source = Files.readString(f);
                for (String finding : findings(codeOnly(source), cName, ffiClasses)) {
                    found.add(MAIN.relativize(f) + ": " + finding);
                }
                for (String name : namedInStrings(source, cName)) {
                    found.add(MAIN.relativize(f) + ": \"" + name + "\"");
                }
            }
        }
        assertThat(found).as("C constants written outside internal.ffi").isEmpty();
    }

    @Test
    void theScanFindsWhatItLooksFor() throws IOException {
        Set<String> ffiClasses = ffiClasses();
        Pattern cName = cNames();
        String bad = codeOnly("""
                enum QpType { RC(2), UC(1 << 1), UD(CEnums.IBV_QPT_UD) } // IBV_QPT_RC in a comment
                int a = IBV_QPS_RESET; int b = -ETIMEDOUT; int c = Other.EINVAL; String s = "IBV_WC_SUCCESS";
                int d = CEnums.IBV_WC_SEND; int e = Errno.ECONNREFUSED; int f = dev.rdma4j.internal.ffi.Errno.EIO;
                static final int ENOMEM = dev.rdma4j.internal.ffi.Libc.ENOMEM; int g = ENOMEM;
                static final int ENODEV = 19; static final int EBUSY = Other.EBUSY; int h = EBUSY;
                """);
        assertThat(findings(bad, cName, ffiClasses)).containsExactly("IBV_QPS_RESET", "ETIMEDOUT", "Other.EINVAL",
                "ENODEV", "EBUSY", "Other.EBUSY", "EBUSY", "RC(2", "UC(1");
    }

    @Test
    void aTableOfCNamesInStringsIsFoundToo() {
        assertThat(namedInStrings("Map.entry(1, \"EPERM\"), Map.entry(5, \"EIO\"); s = \"EIO, or worse\";", cNames()))
                .containsExactly("EPERM", "EIO");
    }

    /** String literals that are exactly a C constant's name, as a hand-written name table has them. */
    private static List<String> namedInStrings(String source, Pattern cName) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile("\"([A-Z][A-Z0-9_]*)\"").matcher(source);
        while (m.find()) {
            Matcher c = cName.matcher(m.group(1));
            if (c.matches() && c.group(1).isEmpty()) {
                found.add(m.group(1));
            }
        }
        return found;
    }

    /** The simple names of internal.ffi's classes, the only qualifiers a C constant may have. */
    private static Set<String> ffiClasses() throws IOException {
        try (Stream<Path> files = Files.list(FFI)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".java"))
                    .map(n -> n.substring(0, n.length() - ".java".length())).collect(Collectors.toSet());
        }
    }

    /** The C names looked for: verbs', rdma_cm's, the IB CM's, epoll's and eventfd's prefixes, and the errnos. */
    private static Pattern cNames() {
        Set<String> errnos = new TreeSet<>();
        for (Field f : Errno.class.getFields()) {
            errnos.add(f.getName());
        }
        errnos.add("EOVERFLOW");
        return Pattern.compile("((?:\\b[\\w$]+\\s*\\.\\s*)?)\\b((?:IBV_|RDMA_CM_|RDMA_PS_|IB_CM_|EFD_)[A-Z0-9_]+"
                + "|EPOLL(?:IN|OUT|PRI|ERR|HUP|RDHUP|ET|ONESHOT|EXCLUSIVE|_CTL_ADD|_CTL_DEL|_CTL_MOD|_CLOEXEC)|"
                + String.join("|", errnos) + ")\\b");
    }

    private static final Pattern NUMBERED_ENUM_CONSTANT = Pattern.compile(
            "(?:^|[{,;])\\s*([A-Z][A-Z0-9_]*\\(\\s*-?(?:0x)?[0-9])", Pattern.MULTILINE);

    /** A class's own alias of an ffi constant: {@code static final int EINVAL = CConstants.EINVAL;}. */
    private static final Pattern ALIAS = Pattern.compile(
            "\\bstatic\\s+final\\s+int\\s+([A-Z][A-Z0-9_]*)\\s*=\\s*(?:[\\w$]+\\s*\\.\\s*)*?([\\w$]+)\\s*\\.\\s*\\1\\s*;");

    private static List<String> findings(String code, Pattern cName, Set<String> ffiClasses) {
        Set<String> aliases = new TreeSet<>();
        Matcher a = ALIAS.matcher(code);
        while (a.find()) {
            if (ffiClasses.contains(a.group(2))) {
                aliases.add(a.group(1));
            }
        }
        List<String> found = new ArrayList<>();
        Matcher m = cName.matcher(code);
        while (m.find()) {
            String qualifier = m.group(1).replaceAll("[\\s.]", "");
            if (qualifier.isEmpty() && aliases.contains(m.group(2))) {
                continue;
            }
            if (!ffiClasses.contains(qualifier)) {
                found.add(qualifier.isEmpty() ? m.group(2) : qualifier + "." + m.group(2));
            }
        }
        Matcher e = NUMBERED_ENUM_CONSTANT.matcher(code);
        while (e.find()) {
            found.add(e.group(1).replaceAll("\\s", ""));
        }
        return found;
    }

    /** The source with its comments, string and char literals and text blocks blanked (lines kept). */
    static String codeOnly(String src) {
        StringBuilder out = new StringBuilder(src.length());
        int i = 0;
        int n = src.length();
        while (i < n) {
            char c = src.charAt(i);
            if (src.startsWith("//", i)) {
                while (i < n && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (src.startsWith("/*", i)) {
                int end = src.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                blank(src, i, end, out);
                i = end;
            } else if (src.startsWith("\"\"\"", i)) {
                int end = src.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                blank(src, i, end, out);
                out.append("\"\"");
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && src.charAt(j) != c && src.charAt(j) != '\n') {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                out.append(c).append(c);
                i = Math.min(n, j + 1);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static void blank(String src, int from, int to, StringBuilder out) {
        for (int k = from; k < to; k++) {
            if (src.charAt(k) == '\n') {
                out.append('\n');
            }
        }
        out.append(' ');
    }
}
