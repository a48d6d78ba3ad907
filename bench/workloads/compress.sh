#!/bin/bash
# compress.sh - the compress workload: xz and bzip2 compress a seeded,
# generated text corpus and decompress it again (single-threaded, output
# thrown away), the SPEC compress case: tight loops over a few images.
#
#   compress.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# full: a 4 MB corpus, quick: 1 MB, guest: 20 KB.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

MB=$(pick 4 1 0.02)
STAMP="mb=$MB seed=1997"
if ! prepared "$STAMP"; then
	rm -rf "$DATA" && mkdir -p "$DATA"
	python3 "$WL_HERE/gen-corpus.py" "$DATA/corpus.txt" --mb "$MB" --seed 1997
	mark_prepared "$STAMP"
fi
[ "$PREPARE_ONLY" = 1 ] && exit 0

xz -T1 -6 -c "$DATA/corpus.txt" >"$SCRATCH/c.xz"
xz -T1 -dc "$SCRATCH/c.xz" >/dev/null
bzip2 -9 -c "$DATA/corpus.txt" >"$SCRATCH/c.bz2"
bzip2 -dc "$SCRATCH/c.bz2" >/dev/null
