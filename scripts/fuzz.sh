#!/usr/bin/env bash
# fuzz.sh - builds the fuzz targets of fuzz/ with libFuzzer and runs each for
# a bounded time. The build tree (build-fuzz/ unless --build-dir) is
# configured with clang, ASan+UBSan (-DLCPI_SANITIZE=ON) and the whole
# library instrumented for coverage (-fsanitize=fuzzer-no-link). Each target
# starts from its kept corpus, fuzz/corpus/<target>/, and grows a working
# corpus in <build>/fuzz/work/<target>/ (not kept in the tree). A crash,
# leak, timeout or out-of-memory stops that target; its input is copied into
# fuzz/corpus/<target>/ (unless --no-keep), where the replay tests run it from
# then on, and the script exits 1 after running the remaining targets.
#
#   scripts/fuzz.sh [--time SECONDS] [--build-dir DIR] [--no-keep] [TARGET...]
#
# fuzz/asan.supp hides reports raised inside libdw itself (a known elfutils
# bug); lcpi's own code stays fully checked.
# Installs clang and the compiler-rt runtime (libFuzzer) with apt-get if they
# are missing. Prints one summary line per target: runs, execs/s, coverage
# (edges), features, corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."

TIME=120
BUILD=build-fuzz
KEEP=1
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --build-dir) BUILD=$2; shift 2 ;;
    --no-keep) KEEP=0; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_elf_image fuzz_kmod_buffer fuzz_profile_db)

scripts/setup.sh
missing=()
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "fuzz.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DLCPI_SANITIZE=ON -DLCPI_LIBFUZZER=ON \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
  >/dev/null
cmake --build "$BUILD" -j"${LCPI_JOBS:-$(nproc)}" --target "${TARGETS[@]}"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:suppressions=$PWD/fuzz/asan.supp"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
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
