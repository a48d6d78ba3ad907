#!/bin/bash
# timesharing.sh - the multi-process mix: two streams of jobs run side by
# side so both CPUs stay busy and the scheduler switches between many
# processes: one stream compiles and compresses, the other queries and runs
# STREAM, each job a fresh process (the other workloads at quick size, or
# guest size with --size guest).
#
#   timesharing.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# full: each stream runs its pair of jobs 3 times, quick: once, guest: once
# at guest size. --data is the parent of the other workloads' data
# directories (default <repo>/build/bench/data).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

ROUNDS=$(pick 3 1 1)
PART=$(pick quick quick guest)
PARENT=${DATA%/*}
[ "$DATA" = "$WL_REPO/build/bench/data/timesharing-$SIZE" ] || PARENT=$DATA
part() {
	"$WL_HERE/$1.sh" --size "$PART" --data "$PARENT/$1-$PART" "${@:2}"
}
if [ "$PREPARE_ONLY" = 1 ]; then
	for w in compile compress dss stream; do part "$w" --prepare; done
	exit 0
fi

stream_a() { for _ in $(seq "$ROUNDS"); do part compile; part compress; done; }
stream_b() { for _ in $(seq "$ROUNDS"); do part dss; part stream; done; }
stream_a &
A=$!
stream_b &
B=$!
wait "$A"
wait "$B"
