#!/bin/bash
# stress.sh CHECK [N] - guest script: N times (50) load lcpi.ko, sample
# while cpu1 goes offline and back, flush, reconcile, stop and unload; every
# 5th round the reader exits while sampling instead and the module is
# unloaded behind it. The kernel log must stay clean. A module loaded
# before (run-guest.sh's, one_boot.sh's) is unloaded first.
set -e
CHECK=$1
N=${2:-50}
if [ -d /sys/module/lcpi ]; then rmmod lcpi; fi
for i in $(seq 1 "$N"); do
	start=$(date +%s)
	insmod "$LCPI_KO"
	if [ $((i % 5)) = 0 ]; then
		"$CHECK" abandon >/dev/null
	else
		"$CHECK" reconcile --ms 100 --hotplug >"$TMPDIR/out" ||
			{ cat "$TMPDIR/out"; echo "stress: round $i failed"; exit 1; }
	fi
	rmmod lcpi
	[ "$(cat /sys/devices/system/cpu/cpu1/online)" = 1 ] || echo 1 >/sys/devices/system/cpu/cpu1/online
	# how long, so that a slow round (a stall that ended) shows
	echo "stress: round $i ok ($(($(date +%s) - start)) s)"
done
"$(dirname "$0")/dmesg-check.sh"
