#!/bin/bash
# events.sh LCPID LCPICTL - guest script: events degrade honestly with both
# sources on a host without a PMU (the x86 guest): `lcpid --events
# cycles,imiss` samples cycles as cpu-clock, labelled as a fallback, and
# refuses imiss with a message naming it and the (absent) PMU, never
# sampling it as anything else; `--events imiss,dmiss` fails with both
# named. Then the module unloads and the kernel log stays clean.
set -e
LCPID=$1
LCPICTL=$2
fail() { echo "events: FAIL: $*"; exit 1; }
. "$(dirname "$0")/stop-lcpid.sh"
for src in kmod perf; do
	log=$TMPDIR/events-$src.log sock=$TMPDIR/events-$src.sock
	"$LCPID" --source "$src" --foreground --events cycles,imiss \
		--db "$TMPDIR/events-$src.db" --socket "$sock" >"$log" 2>&1 &
	pid=$!
	status=""
	for _ in $(seq 1 120); do
		status=$("$LCPICTL" --socket "$sock" status 2>/dev/null) && break
		kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "$src: lcpid exited"; }
		sleep 0.5
	done
	stop_lcpid "$pid" || { rc=$?; cat "$log"; fail "$src: lcpid exit status $rc"; }
	echo "== $src: log"; cat "$log"
	echo "== $src: status (events)"; echo "$status" | grep '^event\.' || true
	echo "$status" | grep -q '^event\.0 cycles sampled-as cpu-clock .*(fallback)$' ||
		fail "$src: cycles not sampled as cpu-clock, labelled as a fallback"
	! echo "$status" | grep -q '^event\.1' || fail "$src: a second event is sampled"
	! echo "$status" | grep -q 'imiss' || fail "$src: imiss sampled as something"
	grep -q "event 'imiss' refused: this host has no hardware PMU" "$log" ||
		fail "$src: no clear refusal of imiss in the log"
	# nothing left to sample: lcpid fails, naming every event
	if "$LCPID" --source "$src" --foreground --events imiss,dmiss \
		--db "$TMPDIR/events-$src-none.db" --socket "$sock.none" >"$log.none" 2>&1; then
		fail "$src: lcpid --events imiss,dmiss ran"
	fi
	cat "$log.none"
	grep -q "no event can be sampled" "$log.none" || fail "$src: no 'no event can be sampled'"
	grep -q "'dmiss' refused" "$log.none" || fail "$src: dmiss not named"
	echo "events: $src ok"
done
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
