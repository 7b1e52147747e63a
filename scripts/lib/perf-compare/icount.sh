#!/usr/bin/env bash
# The guest side of scripts/perf-compare --icount: guest instructions per iteration, rdma4j against C, for the
# cases of guest.sh, counted by the QEMU plugin scripts/lib/icount/icount.c (which appends a line to ICOUNT
# for each window between a start and a stop mark). Interleaved rdma4j, C, rdma4j, C, ... ROUNDS times.
#
#   icount.sh ROUNDS OUT ICOUNT MARKS_DIR
#
# rdma4j: `rdma4j perf -n N --icount-marks` marks the measured iterations of its client (after the JIT's
# warm-up), so a window / N is an iteration. C: perftest-twin (perftest's latency and bandwidth loops, marked
# from inside the same way); a C tool that cannot be changed (ibv_rc_pingpong, and perftest's own tools in
# twin_check): `icount-mark run` marks a whole client run, start-up and connection included, at two lengths
# N1 < N2; of each, the plugin also counts the polled span (from the first poll to the last: the measuring loop,
# without the start-up, whose sampling of the CPU's clock rate spins for a time-dependent count), and
# (span(N2) - span(N1)) / (N2 - N1) is an iteration. Either way a window counts every vCPU: both processes of the
# pair, the kernel's rxe work and whatever else runs in the guest meanwhile (an idle guest executes ~4 million
# instructions a second in timers; the vCPUs halt when idle, so waiting costs nothing). Busy polling's empty polls
# are left out (counted as spin): every program here runs with libicount-poll.so preloaded
# (scripts/lib/icount/poll.c), and a window that saw no poll at all means that hook failed, which is an error;
# write_lat's spin on memory is marked by the programs themselves (rdma4j perf --icount-marks on both sides, the
# twin). The timer's interrupts are left out of the kernel's count (tick). Appends case, metric (total, user,
# kernel, spin, tick), implementation, round, per-iteration value to OUT/raw.tsv, then prints the table
# (scripts/lib/perf-compare/icount-report).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
rounds=$1 out=$2 icount=$3 marks=$4
mkdir -p "$out"
: >"$out/warmups.txt"
export LD_PRELOAD=$marks/libicount-poll.so
. "$ROOT/scripts/lib/jdk.sh"
# each side of a run on vCPUs of its own (pin.sh): where the scheduler put them moved the event-mode counts by up to
# 27% of their median between rounds
PIN=${PERF_COMPARE_PIN:-1}
# PERF_COMPARE_WQ_CPUMASK=HEX: the guest's unbound workqueues (rxe's among them) confined to those CPUs (1: CPU 0),
# a trial for the busy cases' kernel counts under multi-threaded TCG (docs/perf/instructions-2026-11-30c.md)
if [ -n "${PERF_COMPARE_WQ_CPUMASK:-}" ]; then
	echo "$PERF_COMPARE_WQ_CPUMASK" >/sys/devices/virtual/workqueue/cpumask || exit 1
	echo "perf-compare: unbound workqueues on CPUs (mask) $(cat /sys/devices/virtual/workqueue/cpumask)" >&2
fi
. "$ROOT/scripts/lib/perf-compare/runs.sh"
. "$ROOT/scripts/lib/perf-compare/event-spin.sh"
# the longest warm-up of a run (rdma4j perf's --warmup-time, net-pingpong's, NettyEchoCount's): with 20 s,
# send_lat 4 KiB, write_bw 64 KiB and send_lat -e ended every warm-up with the JIT still compiling
WARMUP_TIME=${PERF_COMPARE_WARMUP_TIME:-30}
# net-pingpong's unmeasured round trips before its rounds that last until neither JIT compiled for two (with
# the JIT's usual thresholds a fixed 1,000 left compiling in the measured window: the busy case's user figure
# 85,000 a round trip after 1,000, 69,000 after 3,000)
NET_WARMUP=${PERF_COMPARE_NET_WARMUP:-1000}

# the figures of the window a run added (there must be exactly one; WINDOWS=2: the next to last of two), "total
# user kernel spin tick" (kernel without the timer's interrupt, which tick counts: see icount.c): the whole window's (PART window: rdma4j's marks hold its measured loop; PART start: a whole
# run that polls no CQ, cold start) or its polled span's (PART polled: C's run, start-up included, is marked from
# outside; the span from its first to its last poll is its measuring loop)
last_window() {
	local before=$1 part=$2 expect=${3:-1} after line
	after=$(windows)
	if ((after != before + expect)); then
		echo "perf-compare: expected $expect new instruction-count windows, found $((after - before))" >&2
		return 1
	fi
	line=$(grep '^window ' "$icount" | tail -n "$expect" | head -n 1)
	if [[ $part != start && $line == *" polls 0 "* ]]; then
		echo "perf-compare: no poll marks in the window ($line): libicount-poll.so's hook did not take" >&2
		return 1
	fi
	# "window SEQ total T user U ... polled total T user U ...": NAME VALUE pairs, the polled span's after "polled"
	awk -v part="$part" '{
		p = 0
		for (i = 1; i <= NF; i++) if ($i == "polled") p = i
		from = part == "polled" ? p + 1 : 3
		to = part == "polled" || !p ? NF : p - 1
		for (i = from; i < to; i += 2) f[$i] = $(i + 1)
		print f["total"], f["user"], f["kernel"], f["spin"], f["tick"] + 0
	}' <<<"$line"
}
windows() { local c; c=$(grep -c '^window ' "$icount" 2>/dev/null); echo "${c:-0}"; }

# record_per_iter CASE IMPL ROUND "T U K S TICK" ITERATIONS (an event-mode case's spin counted as work: event-spin.sh)
record_per_iter() {
	local metric value values
	values=($(counted_values "$1" "$4"))
	for metric in total user kernel spin tick; do
		value=${values[0]}
		values=("${values[@]:1}")
		record "$1" "$metric" "$2" "$3" "$(awk -v v="$value" -v n="$5" 'BEGIN { printf "%.1f", v / n }')" || return 1
	done
}

# the JVMs started and those that crashed (a fatal-error report in a run's output), for the last line
jvms=0 crashed=0
count_jvms() {
	local f
	jvms=$((jvms + 2))
	for f in "$out/last.server" "$out/last.client"; do
		if grep -q 'A fatal error has been detected by the Java Runtime Environment' "$f" 2>/dev/null; then
			crashed=$((crashed + 1))
			cp "$f" "$out/crash-$jvms-${f##*.}.log"
		fi
	done
}

# spans CMD N1 N2 JVMS: CMD (a server/client pair: the server as is, the client marked from outside) at
# lengths N1 and N2; sets SPAN to the difference of their polled spans, "total user kernel spin tick". JVMS=1
# counts the pair's JVMs (and their crashes): not in a subshell, then
spans() {
	local cmd=$1 n before w rc t u k s x t1 u1 k1 s1 x1
	SPAN=
	for n in "$2" "$3"; do
		before=$(windows)
		run_pair "$cmd -n $n" "$marks/icount-mark run $cmd -n $n" >/dev/null
		rc=$?
		[ "$4" = 0 ] || count_jvms
		((rc == 0)) || return 1
		w=$(last_window "$before" polled) || return 1
		read -r t u k s x <<<"$w"
		if [ "$n" = "$2" ]; then
			t1=$t u1=$u k1=$k s1=$s x1=$x
		fi
	done
	SPAN="$((t - t1)) $((u - u1)) $((k - k1)) $((s - s1)) $((x - x1))"
}

# the warm-up line of rdma4j's last client (how many rounds, and whether the JIT had settled), for the report
warmups() {
	grep -h '^# warm-up' "$out/last.client" 2>/dev/null | sed "s|^# |$1: |" >>"$out/warmups.txt"
}

# icount_case NAME "RDMA4J ARGS" N "C TOOL ARGS" N1 [N2]: `rdma4j RDMA4J ARGS` (`perf TEST ...`, warmed up for
# WARMUP_TIME s at most, or `net-pingpong ...`, the short path's round trip after its --warmup round trips), whose
# client marks its N measured iterations, against the C tool marked from outside at two lengths N1 and N2 and
# counted over its polled span, or (no N2) against a C tool whose client marks its N1 measured iterations
# itself (perftest-twin)
icount_case() {
	local name=$1 args=$2 n=$3 ctool=$4 n1=$5 n2=${6:-} r before w rc key t0=$SECONDS spin_marks=
	[[ $args != perf\ * ]] || spin_marks="--icount-marks $marks/libicount-marks.so"
	# warm-up rounds as long as the measured run: "no compilation for two rounds" then says the run will see none
	# (rounds of 1,000 before 5,000 measured let write_bw's WorkRing.complete cross C2's back-edge threshold, an OSR
	# compilation, inside the window: -XX:+PrintCompilation, 2026-11-27)
	[[ $args != perf\ * ]] || args+=" -n $n --warmup $n --warmup-time $WARMUP_TIME"
	[[ $args == perf\ * ]] || args+=" -n $n"
	local attempt
	for ((r = 1; r <= rounds; r++)); do
		# a round whose measured run the JIT or the collector disturbed, on either side, is run again once: the window
		# counts that work, every vCPU's (send_lat -e, 2026-11-29: one round of three counted ~650 M more user
		# instructions than the others). The tools say so after the run (WindowWatch: the JIT compiled for 80 ms or its
		# threads used 250 ms of CPU in it, or a collection ran; smaller compilations are said, "# measured run (...)",
		# not counted)
		for attempt in 1 2; do
			before=$(windows)
			# the server takes the marks too: it marks the looks of write_lat's spin on memory (not its loops)
			run_pair "$j $args${spin_marks:+ $spin_marks}" "$j $args --icount-marks $marks/libicount-marks.so" >/dev/null
			rc=$?
			count_jvms
			warmups "$name"
			((rc == 0)) || return 1
			grep -h '^# measured run' "$out/last.client" "$out/last.server" 2>/dev/null |
				sed "s|^# |$name, round $r, attempt $attempt: |" >>"$MEASURED_RUNS" || true
			grep -h '^# measured run disturbed' "$out/last.client" "$out/last.server" 2>/dev/null |
				sed "s|^# |$name, round $r, attempt $attempt: |" >>"$DISTURBED" || true
			grep -q '^# measured run disturbed' "$out/last.client" "$out/last.server" 2>/dev/null || break
		done
		w=$(last_window "$before" window) || return 1
		record_per_iter "$name" rdma4j "$r" "$w" "$n" || return 1
		if [ -z "$n2" ]; then
			before=$(windows)
			run_pair "$ctool" "$ctool" >/dev/null || return 1
			w=$(last_window "$before" window) || return 1
			record_per_iter "$name" C "$r" "$w" "$n1" || return 1
			continue
		fi
		# a C run that an earlier case of this round already counted is not run again (the short path's event cases
		# share ibv_rc_pingpong -e): a count does not depend on when it was taken
		key="$r $ctool $n1 $n2"
		if [ -z "${C_SPANS[$key]:-}" ]; then
			spans "$ctool" "$n1" "$n2" 0 || return 1
			C_SPANS[$key]=$SPAN
		fi
		record_per_iter "$name" C "$r" "${C_SPANS[$key]}" $((n2 - n1)) || return 1
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}
declare -A C_SPANS
DISTURBED="$out/disturbed.txt" # the rdma4j runs whose measured run the JIT or the collector disturbed
MEASURED_RUNS="$out/measured-runs.txt" # what the JIT and the collector did in every measured run that saw either
: >"$DISTURBED"
: >"$MEASURED_RUNS"

# twin_check_case NAME "TWIN ARGS" N "PERFTEST ARGS" N1 N2: perftest-twin's loop (its own marks, N iterations) in
# the rdma4j column against perftest's tool (two lengths, polled spans) in C's: the twin does perftest's verbs
# calls, so the two should agree; this is the check that its figures stand for perftest's
twin_check_case() {
	local name=$1 twin=$2 n=$3 ctool=$4 n1=$5 n2=$6 r before w t0=$SECONDS
	for ((r = 1; r <= rounds; r++)); do
		before=$(windows)
		run_pair "$twin -n $n" "$twin -n $n" >/dev/null || return 1
		w=$(last_window "$before" window) || return 1
		record_per_iter "$name" rdma4j "$r" "$w" "$n" || return 1
		spans "$ctool" "$n1" "$n2" 0 || return 1
		record_per_iter "$name" C "$r" "$SPAN" $((n2 - n1)) || return 1
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

# netty_case NAME WARMUP N: rdma4j-netty's 64 B echo against rdma4j's own floor (rdma4j-bench's NettyEchoCount, one
# JVM a round: both connections warmed up for WARMUP round trips and then until the JIT compiled nothing for two
# rounds (at most WARMUP_TIME s), then N round trips of the floor and N of the channel, each between marks, each
# after a collection of the heap); the floor goes in C's column
netty_case() {
	local name=$1 warmup=$2 n=$3 r before w rc t0=$SECONDS
	local bench=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
		-XX:CompileThresholdScaling=0.1 ${RDMA4J_JAVA_OPTS:-} -cp "$ROOT/rdma4j-bench/target/rdma4j-bench.jar"
		dev.rdma4j.bench.NettyEchoCount "$marks/libicount-marks.so" "$warmup" "$n" "$WARMUP_TIME")
	for ((r = 1; r <= rounds; r++)); do
		before=$(windows)
		timeout "$RUN_TIMEOUT" "${bench[@]}" >"$out/last.client" 2>&1
		rc=$?
		jvms=$((jvms + 1))
		if ((rc != 0)); then
			echo "perf-compare: failed (status $rc): ${bench[*]}" >&2
			cat "$out/last.client" >&2
			return 1
		fi
		warmups "$name"
		w=$(last_window "$before" window 2) || return 1
		record_per_iter "$name" C "$r" "$w" "$n" || return 1
		w=$(last_window "$((before + 1))" window) || return 1
		record_per_iter "$name" rdma4j "$r" "$w" "$n" || return 1
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

# cold_case NAME "RDMA4J ARGS" "C TOOL ARGS": a whole run of `rdma4j RDMA4J ARGS` against one of the C tool, each
# marked from outside (icount-mark run), instructions and wall-clock milliseconds (metric ms); rdma4j with
# bin/rdma4j's own JVM options in the guest and its AOT cache (not -Xbatch: a user's start)
cold_case() {
	local name=$1 args=$2 ctool=$3 r impl cmd before w t0=$SECONDS start ms
	for ((r = 1; r <= rounds; r++)); do
		for impl in rdma4j C; do
			cmd=$ctool
			[ $impl = C ] || cmd="$j $args"
			before=$(windows)
			start=$(date +%s%N)
			RDMA4J_AOT_CACHE= RDMA4J_JAVA_OPTS= "$marks/icount-mark" run $cmd >"$out/last.client" 2>&1 ||
				{ echo "perf-compare: failed: $cmd" >&2; cat "$out/last.client" >&2; return 1; }
			ms=$((($(date +%s%N) - start) / 1000000))
			w=$(last_window "$before" start) || return 1
			record_per_iter "$name" "$impl" "$r" "$w" 1 || return 1
			record "$name" ms "$impl" "$r" "$ms" || return 1
		done
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

# pingpong_case NAME "ARGS" N1 N2: `rdma4j rc-pingpong ARGS` against `ibv_rc_pingpong ARGS`, both marked from
# outside at two lengths and counted over their polled spans, as C's perftest runs above. rdma4j's
# rc-pingpong has no warm-up: its JIT compiles during the first iterations of both lengths, so the difference
# is steady state if that is over within N1.
pingpong_case() {
	local name=$1 args=$2 n1=$3 n2=$4 r t0=$SECONDS
	for ((r = 1; r <= rounds; r++)); do
		spans "$j rc-pingpong $args" "$n1" "$n2" 1 || return 1
		record_per_iter "$name" rdma4j "$r" "$SPAN" $((n2 - n1)) || return 1
		spans "ibv_rc_pingpong $args" "$n1" "$n2" 0 || return 1
		record_per_iter "$name" C "$r" "$SPAN" $((n2 - n1)) || return 1
	done
	echo "perf-compare: $name: $rounds rounds in $((SECONDS - t0)) s" >&2
}

status=0
echo "perf-compare --icount: $rounds rounds, interleaved rdma4j / C, in $(uname -r), JVM options ${RDMA4J_JAVA_OPTS:-none beyond bin/rdma4j}, $(pin_prefix server; printf "server %s" "${PIN_PREFIX[*]:-unpinned}"; pin_prefix client; echo ", client ${PIN_PREFIX[*]:-unpinned}"), $(nproc) vCPUs; results in $out" >&2
cases=${PERF_COMPARE_CASES:-all}
# all: the cases of issue 30's targets; rc_pingpong against ibv_rc_pingpong (pingpong, pingpong_e) and the check
# of perftest-twin against perftest (twin_check) only when named (the 30 minutes hold the targets' cases)
want() { [[ ($cases == all && $1 != pingpong* && $1 != *_check && $1 != *_wr) || ",$cases," == *",$1,"* ]]; }
# C's latency and bandwidth loops: perftest-twin (scripts/lib/icount/perftest_twin.c), perftest's loops with marks of their own, 1,000
# iterations of warm-up: perftest's own tools, marked from outside and measured by the difference of two lengths,
# gave C figures that moved by more than the whole user-space figure between rounds (docs/perf/instructions-2026-11-27.md);
# twin_check compares the two
twin="$marks/perftest-twin"
lat_case() { # NAME "RDMA4J ARGS" "TWIN ARGS"
	icount_case "$1" "$2" 2000 "$twin $3 -n 2000 -w 1000" 2000
}
want send_lat_64 && { lat_case "send_lat 64 B" "perf send_lat -s 64" "send_lat -s 64" || status=1; }
want send_lat_4k && { lat_case "send_lat 4 KiB" "perf send_lat -s 4096" "send_lat -s 4096" || status=1; }
want write_lat && { lat_case "write_lat 64 B" "perf write_lat -s 64" "write_lat -s 64" || status=1; }
want read_lat && { lat_case "read_lat 64 B" "perf read_lat -s 64" "read_lat -s 64" || status=1; }
want atomic_lat && { lat_case "atomic_lat FETCH_AND_ADD" "perf atomic_lat" "atomic_lat" || status=1; }
# the bandwidth cases' C side: perftest-twin's run_iter_bw (perftest's tools, marked from outside, gave C user figures
# that moved by 135% to thousands of % between rounds)
bw_case() { # NAME "RDMA4J ARGS" "TWIN ARGS" N
	icount_case "$1" "$2" "$4" "$twin $3 -n $4 -w 1000" "$4"
}
want write_bw_64 && { bw_case "write_bw 64 B" "perf write_bw -s 64" "write_bw -s 64" 5000 || status=1; }
want write_bw_64k && { bw_case "write_bw 64 KiB" "perf write_bw -s 65536" "write_bw -s 65536" 1000 || status=1; }
want send_bw_4k && { bw_case "send_bw 4 KiB" "perf send_bw -s 4096" "send_bw -s 4096" 5000 || status=1; }
# the same through rdma4j's extended posting API (QueuePairEx: ibv_wr_start ... ibv_wr_complete), the C flow of these
# cases (perftest-twin posts them so, as perftest does where rdma-core has it); only when named
want write_bw_64_wr && { bw_case "write_bw 64 B, ibv_wr_*" "perf write_bw -s 64 --wr-api" "write_bw -s 64" 5000 ||
	status=1; }
want send_bw_4k_wr && { bw_case "send_bw 4 KiB, ibv_wr_*" "perf send_bw -s 4096 --wr-api" "send_bw -s 4096" 5000 ||
	status=1; }
# send_lat -e: ib_send_lat -e hangs on rxe
want send_lat_e && { lat_case "send_lat -e 64 B" "perf send_lat -e -s 64" "send_lat -e -s 64" || status=1; }
if want twin_check; then
	for t in send_lat write_lat read_lat; do
		twin_check_case "check: twin/ib_$t" "$twin $t -s 64 -w 1000" 2000 "ib_$t -s 64" 1000 3000 || status=1
	done
	twin_check_case "check: twin/ib_write_bw" "$twin write_bw -s 64 -w 1000" 5000 "ib_write_bw -s 64" 2000 6000 ||
		status=1
	twin_check_case "check: twin/ib_send_bw" "$twin send_bw -s 4096 -w 1000" 5000 "ib_send_bw -s 4096" 2000 6000 ||
		status=1
fi
# pin_check (named only): C's event-mode runs pinned (the rdma4j column) against the same runs unpinned (C's), the
# check that pinning steadies them: ibv_rc_pingpong -e (two lengths, polled spans) and perftest-twin's send_lat -e
if want pin_check; then
	for ((r = 1; r <= rounds; r++)); do
		for PIN in 1 0; do
			impl=rdma4j
			[ "$PIN" = 1 ] || impl=C
			spans "ibv_rc_pingpong -g 1 -s 64 -e" 1000 3000 0 &&
				record_per_iter "pin check: rc_pingpong -e 64 B" "$impl" "$r" "$SPAN" 2000 || status=1
			before=$(windows)
			run_pair "$twin send_lat -e -s 64 -n 2000 -w 1000" "$twin send_lat -e -s 64 -n 2000 -w 1000" >/dev/null &&
				w=$(last_window "$before" window) &&
				record_per_iter "pin check: twin send_lat -e 64 B" "$impl" "$r" "$w" 2000 || status=1
		done
	done
	PIN=${PERF_COMPARE_PIN:-1}
fi
want pingpong && { pingpong_case "rc_pingpong 64 B" "-g 1 -s 64" 3000 9000 || status=1; }
want pingpong_e && { pingpong_case "rc_pingpong -e 64 B" "-g 1 -s 64 -e" 3000 9000 || status=1; }
# and then rounds of 500 while either side's JIT compiled in the last two (at most WARMUP_TIME s), as perf's warm-up
net="net-pingpong -s 64 --warmup $NET_WARMUP --warmup-time $WARMUP_TIME"
want net_pingpong && { icount_case "short path 64 B busy" "$net --busy-poll" 1000 "ibv_rc_pingpong -g 1 -s 64" 1000 3000 ||
	status=1; }
want net_pingpong_e && { icount_case "short path 64 B event" "$net" 1000 "ibv_rc_pingpong -g 1 -s 64 -e" 1000 3000 ||
	status=1; }
want net_pingpong_async && { icount_case "short path async event" "$net --async" 1000 \
	"ibv_rc_pingpong -g 1 -s 64 -e" 1000 3000 || status=1; }
want netty_echo && { netty_case "netty echo 64 B vs floor" "${PERF_COMPARE_NETTY_WARMUP:-1024}" 640 || status=1; }
want cold_start && { cold_case "cold start: devinfo" devinfo ibv_devinfo || status=1; }
# the plugin finds the timer's interrupt by the addresses it was given (scripts/softroce's @SYMBOL): a run that
# never saw one was given the wrong ones, and its kernel counts hold the ticks
if ! grep -q '^window .* ticks [1-9]' "$icount"; then
	echo "perf-compare: no window saw the timer's interrupt: the plugin's tick=ENTRY:EXIT addresses are not this kernel's" >&2
	status=1
fi
"$ROOT/scripts/lib/perf-compare/icount-report" "$raw" | tee "$out/table.txt" || status=1
jit=$(grep -o 'TieredStopAtLevel=[0-9]' <<<"$(grep -o 'TieredStopAtLevel=[0-9]' "$j") ${RDMA4J_JAVA_OPTS:-}" | tail -n 1)
echo "rdma4j's JVMs: $jvms started, $crashed crashed (JIT: ${jit:-tiered to C2}; JVM options: ${RDMA4J_JAVA_OPTS:-none beyond bin/rdma4j}; each side of a run $([ "$PIN" = 1 ] || echo "not ")pinned to vCPUs of its own, $(nproc) vCPUs)" |
	tee -a "$out/table.txt"
((crashed == 0)) || status=1
disturbed=$(grep -c . "$DISTURBED")
echo "rdma4j's measured runs disturbed by the JIT or the collector: $disturbed (each such round run again once; disturbed.txt beside this table, measured-runs.txt: every run the JIT or the collector touched)" |
	tee -a "$out/table.txt"
still=$(grep -c 'still compiling' "$out/warmups.txt")
echo "rdma4j's warm-ups: $(wc -l <"$out/warmups.txt") runs, $still of them ended at --warmup-time with the JIT still compiling (its late work is then in the counts; warmups.txt beside this table)" |
	tee -a "$out/table.txt"
exit "$status"
