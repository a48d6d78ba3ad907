#!/usr/bin/env bash
# failure-summary.sh - the end of each failed test's output, from a tree's
# last ctest run (Testing/Temporary/LastTest.log), so that a long run's log
# ends with why each test failed, not only which (CI keeps only part of a
# long log). Shown from their first line, where a fuzzer's long tail would
# push them out of the last lines: a sanitizer's report (the error and the
# stack where it happened) and the kernel's log a guest printed before its
# timeout. A fuzzer's crashing input is shown in base64. scripts/test.sh
# calls it for each tree that failed.
#
#   scripts/failure-summary.sh BUILD-DIR [LINES]     (default 30 lines a test)
set -euo pipefail
case "${1:-}" in -h | --help | "") sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
dir=$1/Testing/Temporary
lines=${2:-30}
[ -s "$dir/LastTestsFailed.log" ] || exit 0
echo "=== why each test of $1 failed (the end of its output) ==="
cut -d: -f2- "$dir/LastTestsFailed.log" | while IFS= read -r name; do
  echo "--- $name"
  # The output between this test's "Output:" and its "<end of output>",
  # without the warning every lcpid on a host without a PMU prints.
  output=$(awk -v t="$name" '
    $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); cur = ($0 == t); next }
    cur == 1 && /^Output:$/ { cur = 2; getline; next }
    cur == 2 && /^<end of output>$/ { cur = 0 }
    cur == 2 && !/sampling cpu-clock instead$/ { print }' "$dir/LastTest.log")
  # a sanitizer's report, or the kernel's log a guest printed before its
  # timeout (scripts/qemu/guest-init.sh)
  report=$(grep -n -m1 -E "^==[0-9]+==ERROR: |runtime error: |^guest-init: the command still runs " \
    <<<"$output" | cut -d: -f1 || true)
  if [ -n "$report" ]; then
    echo "(the report, from its first line)"
    sed -n "$report,$((report + 104))p" <<<"$output"
    echo "(the end of the output)"
  fi
  tail -n "$lines" <<<"$output"
  # A fuzzer's crashing input, so that it can be replayed from the log alone
  # (CI keeps no files): base64 -d into fuzz/corpus/<target>/.
  sed -n 's/.*Test unit written to \(.*\)$/\1/p' <<<"$output" | while IFS= read -r input; do
    if [ -f "$input" ] && [ "$(stat -c %s "$input")" -le 16384 ]; then
      echo "(the input, base64: $(basename "$input"))"
      base64 -w 0 "$input"
      echo
    fi
  done
done
