# Sourced by scripts/lib/perf-compare/runs.sh. pin_prefix server|client sets PIN_PREFIX, the words to put before a
# run's command (an array: env, then taskset, which exec it, so $! and timeout still see the command's own process):
# when PIN=1 (scripts/perf-compare --icount sets it; PERF_COMPARE_PIN=0 does not) a side of a run gets a vCPU of its
# own, the server CPU 0, the client CPU 1, C's programs and rdma4j's JVMs alike; otherwise, or on a machine of fewer
# than 2 CPUs, none. Unpinned, the scheduler put the two sides' threads on the same vCPU or apart from run to run,
# and an event-mode run's kernel count followed where they fell: ibv_rc_pingpong -e against itself moved by 27% of
# its median over 5 rounds, pinned by 0.7% (docs/perf/instructions-2026-11-30b.md). A JVM pinned to one CPU would
# size itself for one (the serial collector, one compiler thread): -XX:ActiveProcessorCount, added to
# RDMA4J_JAVA_OPTS (bin/rdma4j's), keeps it sized as an unpinned JVM of this machine. (A guest of 4 vCPUs with two
# for each side, room for a JVM's other threads, was tried: C's send_lat -e counted 11% more kernel instructions than
# pinned to one, rdma4j's moved by 11% between rounds.) PIN_NPROC stands for nproc's count (tests).
pin_prefix() {
	PIN_PREFIX=()
	local cpus cpu=1
	cpus=${PIN_NPROC:-$(nproc)}
	if [ "${PIN:-0}" != 1 ] || ((cpus < 2)); then
		return 0
	fi
	[ "$1" = client ] || cpu=0
	PIN_PREFIX=(env "RDMA4J_JAVA_OPTS=${RDMA4J_JAVA_OPTS:+$RDMA4J_JAVA_OPTS }-XX:ActiveProcessorCount=$cpus"
		taskset -c "$cpu")
}
