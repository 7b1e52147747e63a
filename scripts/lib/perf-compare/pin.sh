# Sourced by scripts/lib/perf-compare/runs.sh. pin_prefix server|client sets PIN_PREFIX, the words to put before a
# run's command (an array: env, then taskset, which exec it, so $! and timeout still see the command's own process).
# With PIN=1 (scripts/perf-compare --icount sets it; PERF_COMPARE_PIN=0 does not) each side of a run has vCPUs of its
# own, C's programs and rdma4j's JVMs alike: on a machine of 4 CPUs or more (--icount boots its guest with 4) the
# server CPUs 0 and 2, the client 1 and 3, room for a JVM's other threads beside the one that measures; on 2 or 3,
# the server CPU 0 and the client CPU 1, and a JVM is told the machine's count (-XX:ActiveProcessorCount, added to
# RDMA4J_JAVA_OPTS, bin/rdma4j's), which it would otherwise size itself for one CPU by (the serial collector, one
# compiler thread). Without PIN=1, or on one CPU, none. Unpinned, the scheduler put the two sides on the same vCPU
# or apart from run to run, and an event-mode run's kernel count followed where they fell: ibv_rc_pingpong -e
# against itself moved by 32% over 5 rounds, pinned by 0.7% (docs/perf/instructions-2026-11-30b.md).
# PIN_NPROC stands for nproc's count (tests).
pin_prefix() {
	PIN_PREFIX=()
	local cpus
	cpus=${PIN_NPROC:-$(nproc)}
	if [ "${PIN:-0}" != 1 ] || ((cpus < 2)); then
		return 0
	fi
	if ((cpus >= 4)); then
		PIN_PREFIX=(taskset -c "$([ "$1" = client ] && echo 1,3 || echo 0,2)")
		return 0
	fi
	PIN_PREFIX=(env "RDMA4J_JAVA_OPTS=${RDMA4J_JAVA_OPTS:+$RDMA4J_JAVA_OPTS }-XX:ActiveProcessorCount=$cpus"
		taskset -c "$([ "$1" = client ] && echo 1 || echo 0)")
}
