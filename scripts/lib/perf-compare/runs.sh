# Sourced by the guest sides of scripts/perf-compare (guest.sh, icount.sh) after they set ROOT and out: the
# guest's address, rdma4j's launcher, and running one server/client pair of a tool (run_pair), reading a
# perftest table (column) and recording a figure in $out/raw.tsv (record).
. "$(dirname "${BASH_SOURCE[0]}")/pin.sh"
raw="$out/raw.tsv"
: >"$raw"
ip=$(ip -4 -o addr show | awk '$4 ~ /^198\.1[89]\./ { sub("/.*", "", $4); print $4; exit }')
[ -n "$ip" ] || { echo "perf-compare: no 198.18.0.0/15 address on this guest" >&2; exit 1; }
port=19000
j="$ROOT/bin/rdma4j"

# wait until something listens on TCP port $1 (a probe connection would be taken for a client)
await_port() {
	for _ in $(seq 600); do
		ss -ltn 2>/dev/null | awk '{print $4}' | grep -q ":$1\$" && return 0
		sleep 0.1
	done
	return 1
}

# one run: the server ($1, a command without the address) in the background, then the client; prints the
# client's output (and the server's after a failure). A run that hangs (the client still running after its
# timeout) is ended, said, and run again. The timeout: RUN_TIMEOUT s for rdma4j's runs (JVM start-up and a
# warm-up of up to WARMUP_TIME s included), C_RUN_TIMEOUT s for C's, which end in ~5 s here. Two attempts,
# except C's ib_send_lat -e: it hangs in most runs on this guest's rxe, both sides blocked in
# ibv_get_cq_event (docs/perf/event-mode-and-cold-2026-11-25.md), so its runs get C_EVENT_TIMEOUT s (a run
# that works takes ~5 s) and C_EVENT_ATTEMPTS attempts; a round in which all hung has no C figure (the median
# is of the rounds that have one), and the report says how many attempts hung. Returns 2 when every attempt hung.
RUN_TIMEOUT=${PERF_COMPARE_RUN_TIMEOUT:-240}
C_RUN_TIMEOUT=${PERF_COMPARE_C_RUN_TIMEOUT:-90}
C_EVENT_TIMEOUT=${PERF_COMPARE_C_EVENT_TIMEOUT:-10}
C_EVENT_ATTEMPTS=${PERF_COMPARE_C_EVENT_ATTEMPTS:-2}
HUNG="$out/hung.txt" # the runs that hung in every attempt, for the report
RETRIED="$out/retried.txt" # one line per attempt that hung and was run again
: >"$HUNG"
: >"$RETRIED"
run_pair() {
	local attempt attempts=2 limit=$C_RUN_TIMEOUT
	if [[ $2 == *"$j "* ]]; then # rdma4j, perhaps under a wrapper (icount-mark run)
		limit=$RUN_TIMEOUT
	elif [[ $2 == "ib_send_lat -e "* ]]; then
		limit=$C_EVENT_TIMEOUT attempts=$C_EVENT_ATTEMPTS
	fi
	for ((attempt = 1; attempt <= attempts; attempt++)); do
		run_pair_once "$1" "$2" "$limit"
		case $? in
		0) return 0 ;;
		124) echo "perf-compare: timed out after $limit s (attempt $attempt of $attempts): $2" >&2
			echo "$2" >>"$RETRIED" ;;
		*) return 1 ;;
		esac
	done
	echo "$2: no output within $limit s, $attempts times" >>"$HUNG"
	return 2
}

run_pair_once() {
	local server=$1 client=$2 limit=$3 log="$out/last" rc
	port=$((port + 1))
	pin_prefix server
	"${PIN_PREFIX[@]}" $server -p "$port" >"$log.server" 2>&1 &
	local spid=$!
	if [[ $client == "$j perf "* || $client == *"$j net-pingpong "* ]]; then
		# rdma4j's client retries connecting (--connect-timeout) while its server starts: the two JVMs start at
		# once instead of one after the other (~15 s a run in the guest). C's clients do not retry, and start
		# in milliseconds anyway.
		client+=" --connect-timeout 180"
	elif ! await_port "$port"; then
		echo "perf-compare: server never listened: $server" >&2
		cat "$log.server" >&2
		kill "$spid" 2>/dev/null
		return 1
	fi
	pin_prefix client
	timeout "$limit" "${PIN_PREFIX[@]}" $client -p "$port" "$ip" >"$log.client" 2>&1
	rc=$?
	if ((rc != 0)); then
		echo "perf-compare: failed (status $rc): $client" >&2
		cat "$log.client" "$log.server" >&2
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		return $((rc == 124 ? 124 : 1))
	fi
	timeout 60 tail --pid="$spid" -f /dev/null 2>/dev/null || kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	cat "$log.client"
}

# the row of a perftest table whose first column is $1: column $2
column() {
	awk -v size="$1" -v col="$2" '$1 == size && NF >= col && $2 ~ /^[0-9]+$/ { v = $col } END { if (v != "") print v }'
}

record() { # case metric impl round value
	[ -n "$5" ] || { echo "perf-compare: no $2 for $1 ($3, round $4)" >&2; return 1; }
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$raw"
}

