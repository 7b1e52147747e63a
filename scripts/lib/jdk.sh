# Sourced by the scripts: sets and exports JAVA_HOME to a JDK >= 25, or explains and exits.
# Order: $JAVA_HOME, Temurin 25's Debian path, any /usr/lib/jvm/* JDK, then java on PATH.

rdma4j_jdk_version() { # prints the feature version of the JDK at $1, or nothing
	local v=""
	if [ -f "$1/release" ]; then
		v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release")
	fi
	if [ -z "$v" ] && [ -x "$1/bin/java" ]; then
		v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 |
			sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')
	fi
	echo "$v"
}

rdma4j_find_jdk() {
	local c v
	for c in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
		[ -n "$c" ] && [ -x "$c/bin/javac" ] || continue
		v=$(rdma4j_jdk_version "$c")
		if [ -n "$v" ] && [ "$v" -ge 25 ]; then
			echo "$c"
			return 0
		fi
	done
	if command -v javac >/dev/null 2>&1; then
		c=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
		v=$(rdma4j_jdk_version "$c")
		if [ -n "$v" ] && [ "$v" -ge 25 ]; then
			echo "$c"
			return 0
		fi
	fi
	return 1
}

if ! JAVA_HOME=$(rdma4j_find_jdk); then
	echo "rdma4j needs a JDK 25 or newer: none found in \$JAVA_HOME (${JAVA_HOME:-unset}), /usr/lib/jvm or on PATH." >&2
	echo "Install one (e.g. Temurin 25) and set JAVA_HOME to it." >&2
	exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
