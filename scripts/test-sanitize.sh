#!/usr/bin/env bash
# test-sanitize.sh - the test suite under AddressSanitizer and
# UndefinedBehaviorSanitizer: configures build-asan/ with -DLCPI_SANITIZE=ON
# (and -DLCPI_WERROR=ON, as CI does), builds everything, and runs every test
# except the QEMU guests (label kmod: the guest runs the host's binaries, and
# ASan's shadow memory does not fit a 1 GiB guest) and the long runs (label
# slow). Any sanitizer report fails the test it happened in: halt_on_error
# makes UBSan abort instead of printing and carrying on.
# -Werror stays on except for -Wmaybe-uninitialized: with -fsanitize=address
# GCC 12 reports false positives inside libstdc++'s <regex> (included by
# Catch2), which fail the build of every test.
# Extra arguments go to ctest (e.g. -R profile_db). LCPI_ASAN_TARGETS, if
# set, builds only those targets (space-separated; pair it with -R or -L).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

BUILD=${LCPI_ASAN_BUILD_DIR:-build-asan}
JOBS=${LCPI_JOBS:-$(nproc)}

# fuzz/asan.supp: reports raised inside libdw itself (an elfutils bug the
# fuzzer found) are not lcpi's; everything else halts.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:suppressions=$PWD/fuzz/asan.supp"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

start=$(date +%s)
cmake -S . -B "$BUILD" -DLCPI_SANITIZE=ON -DLCPI_WERROR=ON \
  -DCMAKE_CXX_FLAGS=-Wno-error=maybe-uninitialized >/dev/null
if [ -n "${LCPI_ASAN_TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$BUILD" -j"$JOBS" --target $LCPI_ASAN_TARGETS
else
  cmake --build "$BUILD" -j"$JOBS"
fi
built=$(date +%s)
status=0
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" -LE "kmod|slow" "$@" || status=$?
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((end - built)) s, status $status" >&2
exit $status
