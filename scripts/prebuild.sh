#!/usr/bin/env bash
# prebuild.sh - what scripts/test.sh builds in the background while the gcc
# tree builds and its tests run. test.sh starts it at SCHED_IDLE (chrt
# --idle 0, inherited by make and the compilers), so it takes only the CPU
# those leave idle: most tests sleep part of the time, and guests boot.
#   1. The arm64 debug kernel, built once into the cache
#      (scripts/qemu/build-nmi-kernel.sh: 476 s on 2 free cores on a
#      fresh machine, at once later). kmod.arm64.nmi.kernel, in
#      test.sh's second ctest pass (label debug-kernel, after every other
#      test), finds it built or waits for it under the script's lock.
#   2. With --sanitize, then, the sanitizer tree (build-san/), which
#      test-sanitize.sh, run once this has ended, finds built.
# A failure is not reported here: the same step runs again in the
# foreground (the kernel's test, test-sanitize.sh's build) and reports it.
# Logs: build/prebuild-kernel.log, build/prebuild-san.log.
#
#   scripts/prebuild.sh [--sanitize]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
case "${1:-}" in -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
mkdir -p build
scripts/qemu/build-nmi-kernel.sh >build/prebuild-kernel.log 2>&1
if [ "${1:-}" = --sanitize ]; then
  # shellcheck source=scripts/sanitize-env.sh
  . scripts/sanitize-env.sh
  # shellcheck disable=SC2119 # every target
  build_sanitize_tree >build/prebuild-san.log 2>&1
fi
exit 0
