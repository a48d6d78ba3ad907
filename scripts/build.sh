#!/usr/bin/env bash
# build.sh - installs the dependencies and builds every user-space part into
# build/ (extra arguments go to cmake's configure step).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DLCPI_WERROR=ON "$@" >/dev/null
cmake --build build -j"$(nproc)"
