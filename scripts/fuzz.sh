#!/usr/bin/env bash
# fuzz.sh - runs the fuzz targets of fuzz/ with libFuzzer for a bounded time,
# longer than the 60 s runs of the test suite. They are built in the
# sanitizer tree (scripts/sanitize-env.sh: build-san/, clang, ASan + UBSan,
# the whole library instrumented for coverage), the one scripts/test-sanitize.sh
# tests. Each target starts from its kept corpus, fuzz/corpus/<target>/, and
# grows a working corpus in build-san/fuzz/work/<target>/ (not kept in the
# tree). A crash, leak, timeout or out-of-memory stops that target; its input
# is copied into fuzz/corpus/<target>/ (unless --no-keep), where the replay
# tests run it from then on, and the script exits 1 after running the
# remaining targets.
#
#   scripts/fuzz.sh [--time SECONDS] [--no-keep] [TARGET...]
#
# Prints one summary line per target: runs, execs/s, corpus size, and
# libFuzzer's last status line (coverage, features).
set -euo pipefail
cd "$(dirname "$0")/.."

TIME=120
KEEP=1
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --no-keep) KEEP=0; shift ;;
    -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_elf_image fuzz_kmod_buffer fuzz_profile_db)

scripts/setup.sh
. scripts/sanitize-env.sh
BUILD=$LCPI_SAN_BUILD
build_sanitize_tree "${TARGETS[@]}"

status=0
for t in "${TARGETS[@]}"; do
  work="$BUILD/fuzz/work/$t"
  artifacts="$BUILD/fuzz/artifacts/$t"
  log="$BUILD/fuzz/$t.log"
  rm -rf "$artifacts"  # only this run's findings are reported and kept
  mkdir -p "$work" "$artifacts"
  echo "fuzz.sh: $t for ${TIME}s (log $log)" >&2
  rc=0
  "$BUILD/fuzz/$t" -max_total_time="$TIME" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  [ -n "$done_line" ] || done_line=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -1 || true)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  echo "fuzz.sh: $t: rc=$rc runs=${runs:-?} exec/s=${speed:-?} corpus=$(ls "$work" | wc -l) last: $done_line"
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -E 'ERROR: |SUMMARY: |runtime error' "$log" | head -5 >&2 || true
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      echo "fuzz.sh: $t: failing input $f" >&2
      if [ "$KEEP" -eq 1 ]; then
        cp "$f" "fuzz/corpus/$t/$(basename "$f")"
        echo "fuzz.sh: kept as fuzz/corpus/$t/$(basename "$f")" >&2
      fi
    done
  fi
done
exit $status
