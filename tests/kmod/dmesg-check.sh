#!/bin/bash
# dmesg-check.sh - the last step of each guest script: fails (exit 1) if
# the guest's kernel log shows a bug (BUG, WARNING, Oops, general
# protection fault, a call trace, a hung task) or a report of the debug
# kernel's checkers (build-nmi-kernel.sh: lockdep's "possible recursive
# locking", "inconsistent lock state", "circular locking", its
# DEBUG_LOCKS_WARN_ON, KASAN's "BUG: KASAN", UBSAN's "UBSAN:", a sleep in
# atomic context).
PATTERN='BUG|WARNING|Oops|general protection|Call Trace|circular locking|recursive locking|inconsistent lock state|lock held when returning|DEBUG_LOCKS_WARN_ON|KASAN|UBSAN|sleeping function called|blocked for more than'
if dmesg | grep -Eq "$PATTERN"; then
	echo "dmesg-check: the kernel log shows a problem:"
	dmesg | grep -E -A 30 "$PATTERN" | head -n 120
	exit 1
fi
echo "dmesg-check: clean"
