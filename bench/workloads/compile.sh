#!/bin/bash
# compile.sh - the compile workload (DCPI's gcc case): gcc -O2 compiles a
# fixed, seeded set of generated C files, one gcc process per file, one after
# another, so the profiler sees many short-lived processes (cc1, as) and a
# high hash-table eviction rate.
#
#   compile.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# full: 24 files (a few seconds here), quick: 8, guest: 1 small one.
# Objects go to a scratch directory and are thrown away.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

FILES=$(pick 24 8 1)
FUNCS=$(pick 15 15 4)
STAMP="files=$FILES funcs=$FUNCS seed=1997 gen=2"
if ! prepared "$STAMP"; then
	rm -rf "$DATA" && mkdir -p "$DATA"
	python3 "$WL_HERE/gen-csrc.py" "$DATA" --files "$FILES" --funcs "$FUNCS" --seed 1997
	mark_prepared "$STAMP"
fi
[ "$PREPARE_ONLY" = 1 ] && exit 0

for src in "$DATA"/*.c; do
	gcc -O2 -Wall -c "$src" -o "$SCRATCH/$(basename "$src" .c).o"
done
