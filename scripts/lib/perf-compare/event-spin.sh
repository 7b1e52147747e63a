# Sourced by scripts/lib/perf-compare/icount.sh. counted_values CASE "T U K S TICK": a window's figures as the table
# counts them. Busy polling's empty polls (S, spin) are waiting, left out of total and user by the plugin; in an
# event-mode case (its name holds " -e " or "event") nothing busy-waits: its empty polls are work (a poll that
# confirms a drain, a poll before arming; C's -e loops have none), so they are added back to total and user there
# (until 2026-11-30 they were left out: rdma4j's send_lat -e had 2,546 an iteration).
counted_values() {
	local v=($2)
	if [[ $1 == *" -e "* || $1 == *event* ]]; then
		echo "$((v[0] + v[3])) $((v[1] + v[3])) ${v[2]} ${v[3]} ${v[4]}"
	else
		echo "$2"
	fi
}
