#!/bin/bash
# dmesg-check.sh - the last step of each guest script: fails (exit 1) if
# the guest's kernel log shows a bug (BUG, WARNING, Oops, general
# protection fault, a call trace, a hung task) or a report of the debug
# kernel's checkers (build-nmi-kernel.sh: lockdep's "possible recursive
# locking", "inconsistent lock state", "circular locking", its
# DEBUG_LOCKS_WARN_ON, KASAN's "BUG: KASAN", UBSAN's "UBSAN:", a sleep in
# atomic context, "trying to register non-static key", "turning off the
# locking correctness validator"), an RCU stall. "Call trace:" is arm64's
# spelling; BUG must start a word, so "DEBUG" is not one (no \b: the
# arm64 guest greps with its busybox).
# tests/kmod/dmesg_check_test.sh runs it over fixtures/dmesg/.
PATTERN='(^|[^A-Za-z0-9_])BUG|WARNING|Oops|general protection|Call [Tt]race|circular locking|recursive locking|inconsistent lock state|lock held when returning|DEBUG_LOCKS_WARN_ON|KASAN|UBSAN|sleeping function called|blocked for more than|INFO: trying to register non-static key|turning off the locking correctness validator|detected stalls'
if dmesg | grep -Eq "$PATTERN"; then
	echo "dmesg-check: the kernel log shows a problem:"
	dmesg | grep -E -A 30 "$PATTERN" | head -n 120
	exit 1
fi
echo "dmesg-check: clean"
