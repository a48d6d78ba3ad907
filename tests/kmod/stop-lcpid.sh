# stop-lcpid.sh - sourced by guest scripts: stop_lcpid PID stops lcpid
# with SIGTERM and returns its exit status; one that has not exited within
# 30 s is a hang, said at once with what lcpid's threads were doing (their
# kernel stacks and wait channels; "0" with no stack: running in user
# space), instead of the guest's timeout saying nothing. The caller shows
# lcpid's log when the status is not 0.
stop_lcpid() {
	local pid=$1 t
	kill -TERM "$pid"
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.1
	done
	echo "stop_lcpid: lcpid $pid still running 30 s after SIGTERM; its threads:"
	for t in /proc/"$pid"/task/*; do
		echo "  thread ${t##*/} $(cat "$t/comm") wchan $(cat "$t/wchan") state $(cut -d' ' -f3 "$t/stat")"
		sed 's/^/    /' "$t/stack"
	done
	kill -KILL "$pid"
	wait "$pid"
	return 124
}
