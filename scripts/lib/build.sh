# Sourced by the scripts after jdk.sh: builds the jars with the Maven wrapper when they are missing or
# older than the sources. $ROOT is the repository.

rdma4j_build_if_stale() {
	local jar="$ROOT/rdma4j-tools/target/rdma4j-tools.jar"
	if [ ! -f "$jar" ] || [ -n "$(find "$ROOT" -name target -prune -o -name build -prune -o \
		\( -path '*/src/*' -o -name pom.xml \) -newer "$jar" -print -quit)" ]; then
		echo "rdma4j: building (./mvnw -DskipTests install)..." >&2
		(cd "$ROOT" && ./mvnw -B -q -DskipTests install) >&2
	fi
}

# Whether this machine has an RDMA device of its own (then no guest is needed).
rdma4j_has_device() {
	compgen -G '/sys/class/infiniband/*' >/dev/null
}
