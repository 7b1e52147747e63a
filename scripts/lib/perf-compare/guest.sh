#!/usr/bin/env bash
# The guest side of scripts/perf-compare: runs every case of rdma4j's tools and rdma-core's C tools
# interleaved (rdma4j, C, rdma4j, C, ... ROUNDS times), both sides of each run on this device, and appends
# one line per measured figure to OUT/raw.tsv: case, metric, implementation, round, value. Then the report.
#
#   guest.sh ROUNDS OUT
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
rounds=$1 out=$2
mkdir -p "$out"
. "$ROOT/scripts/lib/perf-compare/runs.sh"

# rdma4j's warm-up ends when neither side's JIT compiled for two rounds, or after this many seconds (the
# tool's default, 120, is for a user's run; settling takes 5-25 s in the guest, and a run that has not settled
# by then measures a JIT still at work, which shows as an outlying round). 20, not 25: with 25 the whole took
# 26 min on 2026-11-25 (send_lat -e alone 313 s), over the 25 allowed; with 20 (and C -e 2 x 10 s) 23 min 51 s.
WARMUP_TIME=${PERF_COMPARE_WARMUP_TIME:-20}

# perftest-style case: name, size, metric columns ("t_typical:5" or "bw:4 msgrate:5"), rdma4j args, C tool + args,
# and "c-may-hang" when a round whose C runs all hung goes on without a C figure
perf_case() {
	local name=$1 size=$2 metrics=$3 args=$4 ctool=$5 tolerant=${6:-} r impl out_text rc t0=$SECONDS
	for ((r = 1; r <= rounds; r++)); do
		for impl in rdma4j C; do
			if [ "$impl" = rdma4j ]; then
				out_text=$(run_pair "$j perf $args --warmup-time $WARMUP_TIME" "$j perf $args --warmup-time $WARMUP_TIME") ||
					return 1
			else
				out_text=$(run_pair "$ctool" "$ctool")
				rc=$?
				if ((rc == 2)) && [ -n "$tolerant" ]; then
					continue
				fi
				((rc == 0)) || return 1
			fi
			for m in $metrics; do
				record "$name" "${m%%:*}" "$impl" "$r" "$(column "$size" "${m#*:}" <<<"$out_text")" || return 1
			done
		done
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

# roundtrip_case NAME "RDMA4J CMD" "C CMD": ping-pong tools that print rc_pingpong's "N iters in T seconds = X
# usec/iter" (the mean round trip)
roundtrip_case() {
	local name=$1 r impl out_text t0=$SECONDS
	for ((r = 1; r <= rounds; r++)); do
		for impl in rdma4j C; do
			if [ "$impl" = rdma4j ]; then
				out_text=$(run_pair "$2" "$2") || return 1
			else
				out_text=$(run_pair "$3" "$3") || return 1
			fi
			record "$name" usec_per_iter "$impl" "$r" \
				"$(sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' <<<"$out_text" | tail -n 1)" || return 1
		done
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

status=0
cases=${PERF_COMPARE_CASES:-all} # a,b,...: scripts/perf-compare names them
want() { [[ $cases == all || ",$cases," == *",$1,"* ]]; }
echo "perf-compare: $rounds rounds, interleaved rdma4j / C, in $(uname -r), clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown), idle $(grep -o 'idle=[a-z]*' /proc/cmdline || echo 'halts (no idle=)'); results in $out" >&2
want send_lat_64 && { perf_case "send_lat 64 B" 64 "t_typical:5" "send_lat -s 64" "ib_send_lat -s 64" || status=1; }
want send_lat_4k && { perf_case "send_lat 4 KiB" 4096 "t_typical:5" "send_lat -s 4096" "ib_send_lat -s 4096" || status=1; }
want write_lat && { perf_case "write_lat 64 B" 64 "t_typical:5" "write_lat -s 64" "ib_write_lat -s 64" || status=1; }
want read_lat && { perf_case "read_lat 64 B" 64 "t_typical:5" "read_lat -s 64" "ib_read_lat -s 64" || status=1; }
want atomic_lat && { perf_case "atomic_lat FETCH_AND_ADD" 8 "t_typical:5" "atomic_lat" "ib_atomic_lat" || status=1; }
want write_bw_64 && { perf_case "write_bw 64 B" 64 "bw_average:4 msg_rate:5" "write_bw -s 64" "ib_write_bw -s 64" || status=1; }
want write_bw_64k && { perf_case "write_bw 64 KiB" 65536 "bw_average:4 msg_rate:5" "write_bw -s 65536" "ib_write_bw -s 65536" || status=1; }
want send_bw_4k && { perf_case "send_bw 4 KiB" 4096 "bw_average:4 msg_rate:5" "send_bw -s 4096" "ib_send_bw -s 4096" || status=1; }
want send_lat_e && { perf_case "send_lat -e 64 B" 64 "t_typical:5" "send_lat -e -s 64" "ib_send_lat -e -s 64" c-may-hang || status=1; }
want pingpong && { roundtrip_case "rc_pingpong 64 B (cold)" "$j rc-pingpong -g 1 -n 20000 -s 64" \
	"ibv_rc_pingpong -g 1 -n 20000 -s 64" || status=1; }
net="$j net-pingpong -s 64 -n 1000 --warmup 1000" c="ibv_rc_pingpong -g 1 -s 64 -n 1000"
want net_pingpong && { roundtrip_case "short path 64 B busy" "$net --busy-poll" "$c" || status=1; }
want net_pingpong_e && { roundtrip_case "short path 64 B event" "$net" "$c -e" || status=1; }
want net_pingpong_async && { roundtrip_case "short path async event" "$net --async" "$c -e" || status=1; }
"$j" perf-report "$raw" --plot "$out/perf-compare.png" | tee "$out/table.txt" || status=1
if [ -s "$HUNG" ]; then # a case without a ratio says why
	sed 's/^/hung: /' "$HUNG" | tee -a "$out/table.txt"
fi
if [ -s "$RETRIED" ]; then # and runs that hung before one finished are counted
	sort "$RETRIED" | uniq -c | awk '{ n = $1; $1 = ""; print "hung and run again:" $0 " (" n " times)" }' |
		tee -a "$out/table.txt"
fi
exit "$status"
