#!/bin/bash
# faults-max-rate.sh FAULTS [--cycles] - guest script: cpu-clock (with
# --cycles: PMU cycles, 10,000 a sample) at the shortest period the module
# accepts (10 us; 1 ns is refused) on both CPUs, with no
# reader for a while: every sample is accounted, the rate stays under the
# floor, and the guest stays responsive (the checker times a fork+exec loop
# against a baseline; here a shell loop after the run must not take much
# longer than before it). The module unloads and the kernel log stays clean
# (perf's "interrupt took too long" notice is information, not a fault).
set -e
uptime_ms() {	# from /proc/uptime: bash and busybox sh (the arm64 guest) alike
	local up
	read -r up _ </proc/uptime
	echo $((${up%.*} * 1000 + 10#${up#*.} * 10))
}
loop() {	# ms for a shell loop of 2000 iterations
	local s
	s=$(uptime_ms)
	for _ in $(seq 1 2000); do :; done
	echo $(($(uptime_ms) - s))
}
before=$(loop)
FAULTS=$1
shift
"$FAULTS" max-rate --seconds 10 "$@"
after=$(loop)
echo "max-rate: shell loop of 2000 took ${before} ms before, ${after} ms after"
dmesg | grep -i 'perf:' || true
rmmod lcpi
echo "max-rate: shell loop after rmmod: $(loop) ms"
[ "$after" -le $((5 * before + 5000)) ]
"$(dirname "$0")/dmesg-check.sh"
