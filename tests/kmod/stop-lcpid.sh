# stop-lcpid.sh - sourced by guest scripts: stop_lcpid PID stops lcpid
# with SIGTERM and returns its exit status; one that has not exited within
# 20 s is a hang, said at once with what each of lcpid's threads was doing
# (its state, wait channel, system call - "running" is user space - and
# kernel stack), inside the guests' shortest timeout, and killed: status
# 124. The caller shows lcpid's log when the status is not 0.
stop_lcpid() {
	local pid=$1 t deadline=$((SECONDS + 20))
	kill -TERM "$pid"
	while [ $SECONDS -lt $deadline ]; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.1
	done
	echo "stop_lcpid: lcpid $pid still running 20 s after SIGTERM; its threads:"
	for t in /proc/"$pid"/task/*; do
		echo "  thread ${t##*/} $(cat "$t/comm") state $(cut -d' ' -f3 "$t/stat")" \
			"wchan $(cat "$t/wchan") syscall $(cut -d' ' -f1 "$t/syscall")"
		sed 's/^/    /' "$t/stack"
	done
	kill -KILL "$pid"
	wait "$pid"
	return 124
}
