#!/usr/bin/env bash
# test.sh - the test command: installs what is missing, then runs every test
# in both configurations, and fails if either fails:
#   1. build/ (gcc, warnings as errors): every test, the kernel module under
#      QEMU included;
#   2. build-san/ (scripts/test-sanitize.sh: clang, ASan + UBSan, libFuzzer):
#      every test again but the guests and the scale tests, plus the bounded
#      fuzzing runs.
#
#   scripts/test.sh [--no-sanitize] [CTEST-ARGS...]    e.g. -L unit, -LE slow
#
# --no-sanitize runs the first configuration only (quicker while working);
# CI runs both. CTEST-ARGS go to both ctest runs.
#
# Without CTEST-ARGS (CI), build-san/ is built while build/'s QEMU guests
# run (label kmod, last): they leave a core mostly idle, and that build
# runs in the idle scheduling class (chrt --idle), on whatever core they do
# not want. build/'s other tests run alone before it: many measure shares,
# rates and bounds on this host (beside the build, the hostile test's
# flood of 150,000 mappings once met no bound of lcpid's), and the test
# that asserts what a calibration measured (label calibration: a loop's
# pace) runs after it, on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
SANITIZE=1
case "${1:-}" in
  -h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
  --no-sanitize) SANITIZE=0; shift ;;
esac

scripts/build.sh
main=0
san=0
# Why each failed test failed, kept per ctest run (a run's log is the
# tree's last) and printed last, where a cut log still shows it.
why=$(mktemp)
trap 'rm -f "$why"' EXIT
run_ctest() {
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "$@" && return 0
  scripts/failure-summary.sh "$dir" >>"$why"
  return 1
}

if [ "$SANITIZE" = 1 ] && [ $# = 0 ]; then
  run_ctest build -LE '^(kmod|calibration)$' || main=1
  # In a session of its own, so that an interrupted run stops it too.
  setsid chrt --idle 0 scripts/test-sanitize.sh --build-only >build/sanitize-build.log 2>&1 &
  san_build=$!
  trap 'kill -- -"$san_build" 2>/dev/null || true; rm -f "$why"' EXIT
  run_ctest build -L '^kmod$' || main=1
  # A failed build is built again, its errors shown, by the run below.
  if ! wait "$san_build"; then
    echo "test.sh: building build-san/ beside the tests failed; its log's end:" >&2
    tail -n 40 build/sanitize-build.log >&2
  fi
  trap 'rm -f "$why"' EXIT  # its pid may be another's from now on
  tail -n 1 build/sanitize-build.log >&2
  run_ctest build -L '^calibration$' || main=1
else
  run_ctest build "$@" || main=1
fi
if [ "$SANITIZE" = 1 ] && ! scripts/test-sanitize.sh "$@"; then
  san=1
  scripts/failure-summary.sh "${LCPI_SAN_BUILD_DIR:-build-san}" >>"$why"
fi
cat "$why" >&2
[ "$SANITIZE" = 1 ] || exit $main
echo "test.sh: build/ status $main, build-san/ (ASan + UBSan) status $san" >&2
[ $main = 0 ] && [ $san = 0 ]
