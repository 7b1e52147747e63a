package dev.rdma4j;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The core's shape, checked on its compiled classes (ArchUnit) and its sources: the layers (the short path and
 * rdma_cm above the engine, the engine above the verbs), no package cycle, the C room depending on no other
 * package, the engine's thread in its runner only, and the size of its classes.
 */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter().importPath(Path.of("target/classes"));
    private static final String ROOT = "dev.rdma4j";

    /** Each rdma4j package a slice. */
    private static final SliceAssignment PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            String p = c.getPackageName();
            if (p.equals(ROOT)) {
                return SliceIdentifier.of("verbs");
            }
            return p.startsWith(ROOT + ".") ? SliceIdentifier.of(p.substring(ROOT.length() + 1))
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "rdma4j's packages";
        }
    };

    @Test
    void theLayersDependOnlyDownwards() {
        noClasses().that().resideInAnyPackage(ROOT, ROOT + ".internal..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".engine..", ROOT + ".connect..", ROOT + ".net..")
                .because("the verbs are the bottom layer").check(CORE);
        noClasses().that().resideInAPackage(ROOT + ".engine..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".connect..", ROOT + ".net..")
                .because("the engine sits below rdma_cm and the short path").check(CORE);
        noClasses().that().resideInAPackage(ROOT + ".connect..").should().dependOnClassesThat()
                .resideInAPackage(ROOT + ".net..").because("the short path is the top layer").check(CORE);
    }

    @Test
    void noPackageCycles() {
        slices().assignedFrom(PACKAGES).should().beFreeOfCycles().check(CORE);
    }

    @Test
    void theFfiRoomDependsOnNoOtherRdma4jPackage() {
        // it returns raw values and throws NativeException; the API builds Device, VerbsException, ...
        noClasses().that().resideInAPackage(ROOT + ".internal.ffi").should().dependOnClassesThat()
                .resideOutsideOfPackages(ROOT + ".internal.ffi", "java..").check(CORE);
    }

    @Test
    void theVerbsHooksKnowNoApiTypeAndOnlyTheAccessRoomReachesIntoTheVerbs() {
        // internal: the hooks the verbs call (QpDriver, QpVerbs) and shared helpers, below the verbs
        noClasses().that().resideInAPackage(ROOT + ".internal").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT, ROOT + ".internal.access", ROOT + ".engine..", ROOT + ".connect..",
                        ROOT + ".net..").check(CORE);
        // the verbs do not implement or name the bridge that reaches their package-private members
        noClasses().that().resideInAPackage(ROOT).should().dependOnClassesThat()
                .resideInAPackage(ROOT + ".internal.access").check(CORE);
    }

    @Test
    void onlyTheFfiRoomAddressesCMembersByName() {
        // Codec reads and writes a C struct's member by its C name: the typed encoders of internal.ffi (QpAttrs,
        // AhSrqCqAttrs, WrView, WcView) are the only way in from the layers above
        noClasses().that().resideOutsideOfPackage(ROOT + ".internal.ffi").should().dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".internal.ffi.Codec").check(CORE);
        // nor look up a member's offset by its C name: CLayouts.offset, or the FFM API's path by name
        noClasses().that().resideOutsideOfPackage(ROOT + ".internal.ffi").should().dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".internal.ffi.CLayouts")
                .orShould().callMethod(MemoryLayout.PathElement.class, "groupElement", String.class).check(CORE);
    }

    @Test
    void onlyTheEngineRunnerStartsTheEnginesThread() {
        noClasses().that().resideInAPackage(ROOT + ".engine").and().doNotHaveSimpleName("EngineRunner")
                .and().doNotHaveSimpleName("OwnThread")
                .should().callMethod(Thread.class, "ofPlatform").orShould().callMethod(Thread.class, "start")
                .because("the turn (EngineTurn) is apart from what owns the thread (EngineRunner)").check(CORE);
        classes().that().haveSimpleName("EngineTurn").should().onlyDependOnClassesThat()
                .resideOutsideOfPackage(ROOT + ".net..").check(CORE);
    }

    @Test
    void everyPublicMethodReturningAFutureSaysAsync() {
        // one naming for the whole API: a future is always asked for by a name ending in Async (the blocking form,
        // where there is one, has the name without it)
        methods().that().arePublic().and().areDeclaredInClassesThat().arePublic()
                .and().haveRawReturnType(assignableTo(java.util.concurrent.Future.class))
                .or().arePublic().and().areDeclaredInClassesThat().arePublic()
                .and().haveRawReturnType(assignableTo(java.util.concurrent.CompletionStage.class))
                .should().haveNameMatching(".*Async").check(CORE);
    }

    @Test
    void noClassOfTheCoreIsOverSevenHundredLines() throws IOException {
        Map<String, Integer> over = new TreeMap<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                int lines = Files.readAllLines(f).size();
                if (lines > 700) {
                    over.put(f.toString(), lines);
                }
            }
        }
        assertThat(over).as("classes over their limit (lines)").isEmpty();
    }
}
