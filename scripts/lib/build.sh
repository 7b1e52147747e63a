# Sourced by the scripts after jdk.sh: builds the jars with the Maven wrapper when they are missing or
# older than the sources. $ROOT is the repository.

rdma4j_build_if_stale() {
	local jar="$ROOT/rdma4j-tools/target/rdma4j-tools.jar"
	if [ ! -f "$jar" ] || [ -n "$(find "$ROOT" -name target -prune -o -name build -prune -o \
		\( -path '*/src/*' -o -name pom.xml \) -newer "$jar" -print -quit)" ]; then
		echo "rdma4j: building (./mvnw -DskipTests install)..." >&2
		(cd "$ROOT" && ./mvnw -B -q -DskipTests install) >&2
	fi
	rdma4j_aot_cache_if_stale
}

# rdma4j_aot_cache_if_stale: the JDK's ahead-of-time cache of the tools jar (JDK 25: the classes a start loads, read,
# parsed, verified and linked once here instead of at every start), made by a training run of `devinfo` when it is
# missing or older than the jar (by rdma4j_build_if_stale, and by scripts/device-tests after ./mvnw install); bin/rdma4j
# gives it to the JVMs it starts, here and in the Soft-RoCE guest (the same path over 9p). Trained on this host, where
# devinfo may fail for want of a device: it cut the guest's cold devinfo by 18% of its user-space instructions, a
# training in the guest by 9% (2026-11-29). Best effort: a failed training leaves no cache and the tools start
# without one. picocli's classes are not in it (Java 5 bytecode, which the cache cannot verify ahead of time).
rdma4j_aot_cache_if_stale() {
	local jar="$ROOT/rdma4j-tools/target/rdma4j-tools.jar" cache="$ROOT/rdma4j-tools/target/rdma4j-tools.aot" tmp
	[ -f "$jar" ] || return 0
	if [ -f "$cache" ] && [ ! "$jar" -nt "$cache" ]; then
		return 0
	fi
	tmp="$cache.$$" # two starts at once each train their own and the last rename wins
	"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xlog:disable -XX:AOTCacheOutput="$tmp" \
		-jar "$jar" devinfo >/dev/null 2>&1 || true # without a device devinfo fails after the start it trains
	if [ -s "$tmp" ]; then
		mv -f "$tmp" "$cache"
	else
		rm -f "$tmp" "$tmp.config"
	fi
}

# Whether this machine has an RDMA device of its own (then no guest is needed).
rdma4j_has_device() {
	compgen -G '/sys/class/infiniband/*' >/dev/null
}

# rdma4j_test_jar MODULE: the path of MODULE's test jar (target/*-tests.jar), or nothing.
rdma4j_test_jar() {
	compgen -G "$ROOT/$1/target/*-tests.jar" | head -1 || true
}

# rdma4j_test_classpath MODULE...: the class path that runs MODULEs' tests outside Maven: each module's test jar and
# jar, then each one's test-classpath.txt (its dependencies), every entry once, in that order. Jars, not
# target/classes and target/test-classes: in the Soft-RoCE guest every class read from a directory is a lookup over
# 9p, and every class of a dependency is first probed for in each directory before it (the device tests' JVM started
# ~6 s faster from jars, and each of the child JVMs the tests start inherits the class path).
rdma4j_test_classpath() {
	local m t tests entries=()
	for m in "$@"; do
		t="$ROOT/$m/target"
		tests=$(rdma4j_test_jar "$m")
		[ -f "$t/test-classpath.txt" ] && [ -n "$tests" ] && [ -f "${tests%-tests.jar}.jar" ] ||
			{ echo "rdma4j: $m is not built (its test jar, jar or test-classpath.txt); run ./mvnw install first" >&2; return 2; }
		entries+=("$tests" "${tests%-tests.jar}.jar")
	done
	for m in "$@"; do
		entries+=($(tr ':' ' ' <"$ROOT/$m/target/test-classpath.txt"))
	done
	printf '%s\n' "${entries[@]}" | awk 'NF && !seen[$0]++' | paste -sd:
}

# rdma4j_test_jars_fresh MODULE...: fails, saying which, if a module's compiled classes are newer than its jars
# (compiled by an IDE or `./mvnw test-compile` after the last `./mvnw install`).
rdma4j_test_jars_fresh() {
	local m t tests newer
	for m in "$@"; do
		t="$ROOT/$m/target"
		tests=$(rdma4j_test_jar "$m")
		[ -n "$tests" ] || { echo "rdma4j: $m has no test jar; run ./mvnw install first" >&2; return 2; }
		newer=$(find "$t/classes" -newer "${tests%-tests.jar}.jar" -type f -print -quit 2>/dev/null)
		[ -n "$newer" ] || newer=$(find "$t/test-classes" -newer "$tests" -type f -print -quit 2>/dev/null)
		[ -z "$newer" ] || { echo "rdma4j: $newer is newer than $m's jars; run ./mvnw install first" >&2; return 2; }
	done
}
