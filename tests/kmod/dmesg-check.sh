#!/bin/bash
# dmesg-check.sh - the last step of each guest script: fails (exit 1) if
# the guest's kernel log shows a bug (BUG, WARNING, Oops, general
# protection fault, a call trace, a lockdep or hung-task report).
PATTERN='BUG|WARNING|Oops|general protection|Call Trace|circular locking|blocked for more than'
if dmesg | grep -Eq "$PATTERN"; then
	echo "dmesg-check: the kernel log shows a problem:"
	dmesg | grep -E -A 30 "$PATTERN" | head -n 120
	exit 1
fi
echo "dmesg-check: clean"
