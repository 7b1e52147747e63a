#!/usr/bin/env bash
# The guest side of scripts/perf-compare --profile: one `rdma4j perf ARGS` (or `net-pingpong ARGS`) pair with the
# client's measured loop marked, both JVMs writing perf maps, their /proc/PID/maps and the kernel's symbols copied
# to OUT for scripts/lib/icount/where.
#
#   profile-guest.sh OUT MARKS_DIR WARMUP_SECONDS ARGS...
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
out=$1 marks=$2 warmup=$3
shift 3
mkdir -p "$out"
ip=${RDMA4J_GUEST_ADDR:?profile-guest.sh runs in the Soft-RoCE guest (scripts/softroce sets RDMA4J_GUEST_ADDR)}
export LD_PRELOAD=$marks/libicount-poll.so
export RDMA4J_JAVA_OPTS="${RDMA4J_JAVA_OPTS:+$RDMA4J_JAVA_OPTS }-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
cat /proc/kallsyms >"$out/kallsyms"
j=$ROOT/bin/rdma4j
# `perf ARGS` (perf is implied when ARGS start with its test), or `net-pingpong ARGS` (the short path)
tool=(perf --warmup-time "$warmup") connected='remote address'
if [ "${1:-}" = net-pingpong ]; then
	shift
	tool=(net-pingpong --warmup-time "$warmup") connected='connected to'
elif [ "${1:-}" = perf ]; then
	shift
fi
# each side on a vCPU of its own, as --icount runs them (scripts/lib/perf-compare/pin.sh)
PIN=${PERF_COMPARE_PIN:-1}
. "$ROOT/scripts/lib/perf-compare/pin.sh"
pin_prefix server
"${PIN_PREFIX[@]}" "$j" "${tool[@]}" "$@" -p 19500 >"$out/server.log" 2>&1 &
server=$!
pin_prefix client
"${PIN_PREFIX[@]}" "$j" "${tool[@]}" "$@" -p 19500 --connect-timeout 600 --icount-marks "$marks/libicount-marks.so" "$ip" \
	>"$out/client.log" 2>&1 &
client=$!
# the maps once both JVMs are connected (the client says so before its warm-up): during the warm-up, so that
# these processes (cat, pgrep, ...) run before the measured loop, not in it
for _ in $(seq 2400); do grep -q "$connected" "$out/client.log" 2>/dev/null && break; sleep 0.5; done
for pid in $server $client; do
	java=$(pgrep -P "$pid" java || echo "$pid") # bin/rdma4j execs java: the same pid, or its child
	cat "/proc/$java/maps" >"$out/maps.$java" 2>/dev/null
done
# every other process's too, with its command line: what else runs while the loop is measured
for dir in /proc/[0-9]*; do
	pid=${dir#/proc/}
	[[ -e $out/maps.$pid ]] && continue
	{ tr '\0' ' ' <"$dir/cmdline"; echo; cat "$dir/maps"; } >"$out/other-maps.$pid" 2>/dev/null
	[ -s "$out/other-maps.$pid" ] && [ "$(wc -l <"$out/other-maps.$pid")" -gt 1 ] || rm -f "$out/other-maps.$pid"
done
wait "$client"
rc=$?
wait "$server"
cp /tmp/perf-*.map "$out/" 2>/dev/null # the guest's /tmp is its own
cat "$out/client.log"
exit "$rc"
