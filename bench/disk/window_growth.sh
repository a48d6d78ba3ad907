#!/bin/bash
# window_growth.sh - how a window's rows grow with its length, for the disk
# a host needs per day at lcpid's default 5,000 samples/s/CPU
# (docs/operators.md, "How much disk"; bench/results/soak.md).
#
#   sudo bench/disk/window_growth.sh BUILD MINUTES OUT_DIR
#
# Runs BUILD's lcpid with 60 s windows for MINUTES minutes over a
# compile-and-script loop that keeps every CPU busy (gcc on one of lcpi's
# sources, python3, sh), then asks the database, for k = 1 .. MINUTES, how
# many distinct (image, event, offset) rows the first k whole windows hold
# together: the rows one window of k minutes would have stored. Prints
# "k rows bytes" lines (bytes at the measured bytes per count row, SQLite's
# dbstat) and keeps the database in OUT_DIR.
set -euo pipefail
BUILD=${1:?usage: window_growth.sh BUILD MINUTES OUT_DIR}
MINUTES=${2:?}
OUT=${3:?}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
rm -f "$OUT"/p.db*
"$BUILD/daemon/lcpid" -f --source perf --db "$OUT/p.db" --socket "$OUT/s.sock" \
	--events cpu-clock --window 60s --flush-interval 10 --image-cache-size 0 --max-overhead 0 \
	--log-level warn 2>"$OUT/lcpid.log" &
lcpid=$!
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null || true' EXIT
sleep 2
work() {
	while :; do
		gcc -O2 -c "$REPO/libprofile/store/profile_db.cpp" -I"$REPO" \
			-I"$BUILD/libprofile/include/store" -I"$BUILD/libprofile/include/base" \
			-std=c++20 -o /dev/null
		python3 -c 'import json,re,sqlite3; sum(i*i for i in range(300000))'
	done
}
scripts() {
	while :; do
		python3 -c 'import hashlib; [hashlib.sha256(str(i).encode()).digest() for i in range(200000)]'
		sh -c 'for i in $(seq 2000); do :; done'
	done
}
for _ in $(seq "$(nproc)"); do work & done
scripts &
# One whole window more than asked: the first (partial) one is left out.
sleep $(((MINUTES + 2) * 60))
kill $(jobs -p | grep -v "^$lcpid$") 2>/dev/null || true
kill -TERM "$lcpid"
wait "$lcpid" || true
trap - EXIT
sqlite3 "$OUT/p.db" "SELECT 'bytes_per_row', sum(pgsize) * 1.0 / (SELECT count(*) FROM counts)
                     FROM dbstat WHERE name = 'counts';" | tr '|' ' '
# Whole windows only: from the second epoch on, MINUTES of them.
first=$(sqlite3 "$OUT/p.db" "SELECT min(epoch_id) + 1 FROM counts")
for k in $(seq 1 "$MINUTES"); do
	sqlite3 "$OUT/p.db" "SELECT $k, count(*) FROM (SELECT DISTINCT image_id, event_id, image_offset
	                     FROM counts WHERE epoch_id BETWEEN $first AND $first + $k - 1);" | tr '|' ' '
done
