#!/usr/bin/env bash
# test.sh - the test command: installs what is missing, then runs every test
# in both configurations, and fails if either fails:
#   1. build/ (gcc, warnings as errors): every test, the kernel module under
#      QEMU included;
#   2. build-san/ (scripts/test-sanitize.sh: clang, ASan + UBSan, libFuzzer):
#      every test again but the guests, the scale, fleet, calibration, peer
#      and style tests and the hostile attacks one at a time
#      (test-sanitize.sh --help says why), plus the bounded fuzzing runs.
#
#   scripts/test.sh [--no-sanitize] [CTEST-ARGS...]    e.g. -L unit, -LE slow
#
# --no-sanitize runs the first configuration only (quicker while working);
# CI runs both. CTEST-ARGS go to both ctest runs.
#
# Without CTEST-ARGS, as CI runs it, scripts/prebuild.sh builds the arm64
# debug kernel (a fresh machine's once) and the sanitizer tree in the
# background from the start, at SCHED_IDLE, on the CPU the gcc tree's build
# and tests leave idle; the tests that boot that kernel (label debug-kernel)
# run last, in a second ctest pass.
set -euo pipefail
cd "$(dirname "$0")/.."
SANITIZE=1
case "${1:-}" in
  -h | --help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
  --no-sanitize) SANITIZE=0; shift ;;
esac

scripts/setup.sh
# Why each failed test failed, kept from each ctest pass (the next pass
# writes the tree's logs anew) and printed last, where a cut log still
# shows it.
summary=$(mktemp)
prebuild=""
# the background group only while it runs: once reaped, its number may be
# another group's
trap '[ -z "$prebuild" ] || [ -z "$(jobs -rp)" ] || kill -- -"$prebuild" 2>/dev/null || true
  rm -f "$summary"' EXIT
if [ $# = 0 ]; then
  prebuild_args=()
  [ "$SANITIZE" = 0 ] || prebuild_args=(--sanitize)
  # In a process group of its own (job control), so that an interrupted
  # run stops all of it; not in a session of its own (setsid): the
  # scheduler's autogroups share the CPU between sessions, and gave it half
  # of it whatever its policy.
  set -m
  chrt --idle 0 scripts/prebuild.sh "${prebuild_args[@]}" </dev/null &
  prebuild=$!
  set +m
fi
scripts/build.sh
main=0
san=0
gcc_tests() {
  local rc=0
  # CTest writes the list of failed tests only when one fails
  rm -f build/Testing/Temporary/LastTestsFailed.log
  ctest --test-dir build --output-on-failure -j"$(nproc)" "$@" || rc=$?
  [ $rc = 0 ] && return
  main=$rc
  scripts/failure-summary.sh build >>"$summary" || true
}
if [ -n "$prebuild" ]; then
  # The tests that boot the debug kernel last, in a pass of their own: its
  # background build has every other test's idle CPU, and its test
  # (kmod.arm64.nmi.kernel) waits only for what is left. CTest has no
  # "last" (it runs a test's DEPENDS early).
  gcc_tests -LE debug-kernel
  gcc_tests -L debug-kernel
else
  gcc_tests "$@"
fi
if [ "$SANITIZE" = 1 ]; then
  # one build of build-san/ at a time: the background one ends first
  [ -z "$prebuild" ] || wait "$prebuild" || true
  scripts/test-sanitize.sh "$@" || san=$?
fi
cat "$summary" >&2
[ $san = 0 ] || scripts/failure-summary.sh "${LCPI_SAN_BUILD_DIR:-build-san}" >&2 || true
[ "$SANITIZE" = 1 ] || exit $main
echo "test.sh: build/ status $main, build-san/ (ASan + UBSan) status $san" >&2
[ $main = 0 ] && [ $san = 0 ]
