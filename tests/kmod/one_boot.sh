#!/bin/bash
# one_boot.sh SCRIPT ARGS... [:: SCRIPT ARGS...]... - guest script: runs
# several guest scripts in one boot, each part with lcpi.ko freshly loaded
# as run-guest.sh loads it for a single script (which loads it before the
# first part). Short tests share a boot because a boot costs more than
# most of them: 7 s on Debian 12's 6.1, 10 s on Debian 13's 6.12 under
# TCG. Every part runs even after one fails, each ends with its own
# dmesg-check.sh, and the exit status is the number of parts that failed.
failed=0
run_part() {
	[ $# -gt 0 ] || return 0
	if [ -n "$started" ]; then
		# a part that failed may have left the module loaded: start afresh
		if [ -d /sys/module/lcpi ]; then rmmod lcpi; fi
		insmod "$LCPI_KO" || { echo "one-boot: insmod failed before $1"; failed=$((failed + 1)); return; }
	fi
	started=1
	echo "one-boot: == $(basename "$1") ${*:2}"
	local start=$SECONDS
	"$@"
	local rc=$?
	if [ $rc = 0 ]; then
		echo "one-boot: $(basename "$1") passed in $((SECONDS - start)) s"
	else
		echo "one-boot: $(basename "$1") FAILED (exit $rc) after $((SECONDS - start)) s"
		failed=$((failed + 1))
	fi
}
started=""
part=()
for arg in "$@"; do
	if [ "$arg" = "::" ]; then
		run_part "${part[@]}"
		part=()
	else
		part+=("$arg")
	fi
done
run_part "${part[@]}"
echo "one-boot: $failed part(s) failed"
exit "$failed"
