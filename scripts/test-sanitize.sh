#!/usr/bin/env bash
# test-sanitize.sh - the test suite in the sanitizer configuration
# (scripts/sanitize-env.sh: clang, ASan + UBSan, libFuzzer): builds
# build-san/ and runs every test there, the bounded fuzzing runs
# (fuzz.<target>.run, 30 s each) included, but those that run once, in
# build/, to keep CI's clock: the QEMU guests (label kmod), the scale
# tests (label scale: the million-entry merge, the 60 s load, the
# 10,000-process churn and the soak, whose point is behaviour at size and
# over time, and which take minutes each), the fleet report over two
# ClickHouse servers (label fleet: a minute of servers and real lcpid
# runs; fleet-ship, whose escaping meets hostile names, runs here) and
# the budget cases that assert what a calibration measured (label
# calibration: ASan's slowdown makes the slope noise, each refused), the
# tests whose time is a peer's (label peer: Chromium, go tool pprof and perf
# reading what lcpiprof wrote or sampled; the tools tests run those formats
# sanitized here), the hostile attacks one at a time (the tree runs them
# all at once, which checks each; tests/integration/hostile.cmake), and the
# style checks (label style: clang-format and the layering probes read the
# sources and the include paths, the same in both trees).
# LCPI_SAN_GUESTS=1 runs the guests here too (lcpid, KmodSource and the
# checkers then run sanitized against the real module), LCPI_SAN_SCALE=1
# the scale, fleet, calibration and peer tests.
# scripts/test.sh runs this after the main suite, and so does CI.
#
#   scripts/test-sanitize.sh [CTEST-ARGS...]     e.g. -R profile_db
#
# LCPI_SAN_TARGETS, if set, builds only those targets (space-separated; pair
# it with -R or -L). LCPI_JOBS sets the parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,28s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
scripts/setup.sh
. scripts/sanitize-env.sh
JOBS=${LCPI_JOBS:-$(nproc)}

start=$(date +%s)
# shellcheck disable=SC2086
build_sanitize_tree ${LCPI_SAN_TARGETS:-}
built=$(date +%s)
status=0
left_out=(style)
[ "${LCPI_SAN_GUESTS:-0}" = 1 ] || left_out+=(kmod)
[ "${LCPI_SAN_SCALE:-0}" = 1 ] || left_out+=(scale fleet calibration peer)
exclude=()
if [ ${#left_out[@]} -gt 0 ]; then exclude=(-LE "^($(IFS='|'; echo "${left_out[*]}"))\$"); fi
ctest --test-dir "$LCPI_SAN_BUILD" --output-on-failure -j"$JOBS" "${exclude[@]}" "$@" || status=$?
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((end - built)) s, status $status" >&2
exit $status
