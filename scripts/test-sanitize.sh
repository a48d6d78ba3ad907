#!/usr/bin/env bash
# test-sanitize.sh - the test suite in the sanitizer configuration
# (scripts/sanitize-env.sh: clang, ASan + UBSan, libFuzzer): builds
# build-san/ and runs every test there, the slow ones and the bounded fuzzing
# runs (fuzz.<target>.run, 60 s each) included, but the QEMU guests (label
# kmod): they run once, in build/, to keep CI's clock (LCPI_SAN_GUESTS=1
# runs them here too, where lcpid, KmodSource and the checkers then run
# sanitized against the real module). scripts/test.sh runs this after the
# main suite, and so does CI.
#
#   scripts/test-sanitize.sh [CTEST-ARGS...]     e.g. -R profile_db
#
# LCPI_SAN_TARGETS, if set, builds only those targets (space-separated; pair
# it with -R or -L). LCPI_JOBS sets the parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
scripts/setup.sh
. scripts/sanitize-env.sh
JOBS=${LCPI_JOBS:-$(nproc)}

start=$(date +%s)
configure_sanitize_tree
# shellcheck disable=SC2086
cmake --build "$LCPI_SAN_BUILD" -j"$JOBS" ${LCPI_SAN_TARGETS:+--target $LCPI_SAN_TARGETS}
built=$(date +%s)
status=0
guests=(-LE kmod)
if [ "${LCPI_SAN_GUESTS:-0}" = 1 ]; then guests=(); fi
ctest --test-dir "$LCPI_SAN_BUILD" --output-on-failure -j"$JOBS" "${guests[@]}" "$@" || status=$?
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((end - built)) s, status $status" >&2
exit $status
