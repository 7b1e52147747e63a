# Sourced by every script (after jdk.sh): rdma4j_provision installs the Debian packages listed in
# scripts/lib/packages that are missing (as root; otherwise it prints the command to run and fails).
# Refreshes the package lists once when a package is unknown to them. $ROOT is the repository.

rdma4j_packages() { # the list, without comments and blank lines
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$ROOT/scripts/lib/packages"
}

rdma4j_missing_packages() {
	local have p
	have=" $(dpkg-query -W -f='${db:Status-Status}:${Package} ' $(rdma4j_packages) 2>/dev/null) " || true
	for p in $(rdma4j_packages); do
		[[ $have == *" installed:$p "* ]] || echo "$p"
	done
}

rdma4j_provision() {
	local missing
	missing=$(rdma4j_missing_packages | tr '\n' ' ')
	[ -n "${missing// /}" ] || return 0
	if [ "$(id -u)" != 0 ]; then
		echo "rdma4j: missing Debian packages; run: sudo apt-get install -y --no-install-recommends $missing" >&2
		return 1
	fi
	echo "rdma4j: installing $missing" >&2
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing)
	# A new machine's package lists may not know a package yet: refresh them once and retry.
	"${apt[@]}" >&2 || { apt-get update -q >&2 && "${apt[@]}" >&2; } || {
		echo "rdma4j: apt-get install failed for: $missing" >&2
		return 1
	}
}
