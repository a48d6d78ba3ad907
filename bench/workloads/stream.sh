#!/bin/bash
# stream.sh - the STREAM workload: runs the stream program (stream.c:
# assign, scale, saxpy, sum over arrays larger than the caches).
#
#   stream.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# full: 4 M elements (96 MB) x 120 iterations, quick: 2 M x 40, guest: 256 K x 4.
# Uses build/bench/workloads/stream when built (cmake), else compiles
# stream.c with gcc -O2 into the data directory (once).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

N=$(pick 4000000 2000000 262144)
ITERS=$(pick 120 40 4)
BIN=$WL_REPO/build/bench/workloads/stream
if [ ! -x "$BIN" ]; then
	BIN=$DATA/stream
	if [ ! -x "$BIN" ] || [ "$WL_HERE/stream.c" -nt "$BIN" ]; then
		mkdir -p "$DATA"
		gcc -O2 -o "$BIN" "$WL_HERE/stream.c"
	fi
fi
[ "$PREPARE_ONLY" = 1 ] && exit 0

"$BIN" "$N" "$ITERS" >/dev/null
