#!/usr/bin/env bash
# test.sh - the test command: installs what is missing, builds, and runs every
# test (unit, integration, and the kernel module under QEMU) with CTest.
# Extra arguments go to ctest (e.g. -L unit, -LE slow).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
