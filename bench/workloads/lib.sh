# shellcheck shell=bash disable=SC2034 # sets variables for the sourcing script
# lib.sh - sourced by every workload script: the common command line, the
# data directory and the scratch directory. Not run on its own.
#
#   WORKLOAD.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# --size   full (2-10 s on a 2-CPU host), quick (about a second), guest (for
#          the QEMU TCG guest, ~20x slower than the host: a few seconds there)
# --data   where the generated inputs live (default
#          <repo>/build/bench/data/<workload>-<size>); made once, then only
#          read, so a read-only copy (the guest's) works
# --prepare  generate the inputs if missing, then exit without running
# Inputs are generated from fixed seeds: every run sees the same bytes.
set -euo pipefail

WL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WL_REPO=$(cd "$WL_HERE/../.." && pwd)
WL_NAME=$(basename "$0" .sh)
SIZE=full
DATA=""
PREPARE_ONLY=0

wl_usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--size) SIZE=${2:?--size needs full, quick or guest}; shift 2 ;;
	--quick) SIZE=quick; shift ;;
	--data) DATA=${2:?--data needs a directory}; shift 2 ;;
	--prepare) PREPARE_ONLY=1; shift ;;
	-h | --help) wl_usage 0 ;;
	*) echo "$WL_NAME: unknown option $1 (try --help)" >&2; exit 2 ;;
	esac
done
case "$SIZE" in full | quick | guest) ;; *) echo "$WL_NAME: --size is full, quick or guest" >&2; exit 2 ;; esac
DATA=${DATA:-$WL_REPO/build/bench/data/$WL_NAME-$SIZE}

# pick VALUE_FOR_FULL VALUE_FOR_QUICK VALUE_FOR_GUEST: the one for --size
pick() {
	case "$SIZE" in full) echo "$1" ;; quick) echo "$2" ;; guest) echo "$3" ;; esac
}

# prepared: true when DATA holds inputs made with this stamp (sizes, seed)
prepared() {
	[ -f "$DATA/.stamp" ] && [ "$(cat "$DATA/.stamp")" = "$1" ]
}

# mark_prepared STAMP: inputs are complete
mark_prepared() {
	echo "$1" >"$DATA/.stamp"
}

# a scratch directory for outputs, removed on exit
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/lcpi-$WL_NAME.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
