#!/usr/bin/env bash
# setup.sh - installs every build and test dependency from Debian's packages.
# Idempotent and fast when everything is already there: apt-get runs only
# for packages that are missing. Needs root (or sudo) to install.
#
#   scripts/setup.sh            everything: the build, the tests, the module, bench
#   scripts/setup.sh --minimal  only what configuring the build and running lcpid
#                               and the tools needs (scripts/profile.sh)
#
# apt-get's output is condensed to a line per phase; all of it is shown if it
# fails.
set -euo pipefail

MINIMAL=(
  # build
  build-essential cmake pkg-config
  # libprofile, lcpid and the tools
  libelf-dev libdw-dev liblzma-dev libsqlite3-dev sqlite3 libspdlog-dev libcapstone-dev libcli11-dev
  # the aggregator's pending counts: abseil's flat_hash_map
  libabsl-dev
  # separate debug files: libdebuginfod, and zlib for the .gnu_debuglink CRC
  libdebuginfod-dev zlib1g-dev
  # demangling with a bounded output: libiberty's cplus_demangle_v3_callback
  libiberty-dev
  # lcpi-ship: ClickHouse's HTTP interface through libcurl
  libcurl4-openssl-dev
  # the configure step finds Catch2 even when no test is built
  catch2
)
PACKAGES=(
  "${MINIMAL[@]}"
  # tests
  elfutils binutils linux-perf
  # DWARF with a supplementary file, as Debian's -dbgsym packages have (debuginfo_test)
  dwz
  # the debuginfod server and curl for the interop tests (interop.debuginfod)
  debuginfod curl
  # lcpi-ship's test ships into a clickhouse-server of its own (fleet-ship;
  # Debian 12's 18.16, started as a child process, never the system service)
  clickhouse-server
  # go tool pprof reads lcpiprof --format pprof (interop, tests/integration/pprof.cmake)
  golang-go
  # the HTML report opened in a headless browser (interop.html)
  chromium
  # the JIT runtime whose perf map (node --perf-basic-prof) names its code (jit-node)
  nodejs
  # a file system that stops answering, as a hung network mount does: FUSE
  # (tests/integration/hostile_test.cpp, workloads/hang_fs.c)
  fuse3 libfuse3-dev
  # the sanitizer configuration (ASan + UBSan) and libFuzzer: clang's runtime
  clang libclang-rt-dev
  # style.clang-format
  clang-format
  # bench/ workloads
  bzip2 python3
  # plots: the soak test's database size and RSS over time (soak.*,
  # bench/results/soak.png) and bench/cost's CPU time against samples
  gnuplot-nox
  # the kernel module and the QEMU harness that loads it into a real kernel
  linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio kmod xz-utils
  # the arm64 guest (a real, emulated PMU; tests kmod.arm64.*): QEMU for
  # aarch64, the cross compilers for lcpi.ko and the static guest programs
  # (binutils-aarch64-linux-gnu comes with them); its kernel, headers and
  # busybox are fetched into a cache by scripts/qemu/fetch-kernel.sh
  qemu-system-arm gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  # the arm64 guest kernel whose PMU interrupt is an NMI (kmod.arm64.nmi*),
  # built from Debian's linux-source-6.1 by scripts/qemu/build-nmi-kernel.sh
  # into the same cache: kconfig's and dtc's parsers need flex and bison
  flex bison
  # Debian 13's 6.12 kernel for the same x86-64 tests (kmod.6.12.*): its
  # kbuild tools and gcc-14 run here through patchelf; its bzImage is zstd
  patchelf zstd
  # the Debian package (cmake/packaging.cmake) and its test (interop.package):
  # dpkg-shlibdeps, man pages from --help, lintian, man -l, systemd-analyze,
  # and what the package's maintainer scripts call
  dpkg-dev fakeroot help2man lintian man-db systemd adduser init-system-helpers
)
if [ "${1:-}" = "--minimal" ]; then PACKAGES=("${MINIMAL[@]}"); fi

# lcpid makes its database 0640 root:lcpi: the members of this group read
# profiles with the tools without being root (docs/operators.md).
if ! getent group lcpi >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then sudo groupadd --system lcpi; else groupadd --system lcpi; fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
log=$(mktemp /tmp/lcpi-setup-XXXXXX.log)
echo "setup: installing ${#missing[@]} packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
echo "setup: updating the package lists" >&2
$SUDO apt-get update -qq >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
# One line per phase (the first time it is seen): downloading, unpacking,
# setting up, triggers. A shell loop, not awk: Debian's mawk reads a pipe in
# large blocks, so its lines would come late and all at once.
condense() {
  local line seen=" " configured=0
  phase() {
    case "$seen" in *" $1 "*) return ;; esac
    seen="$seen$1 "
    echo "setup: $1" >&2
  }
  while IFS= read -r line; do
    case "$line" in
      "Need to get"* | Fetched*) echo "setup: $line" >&2 ;;
      Get:*) phase downloading ;;
      Selecting* | Preparing* | Unpacking*) phase unpacking ;;
      "Setting up"*) configured=$((configured + 1)); phase "setting up" ;;
      "Processing triggers"*) phase "running triggers" ;;
    esac
  done
  if [ "$configured" -gt 0 ]; then echo "setup: $configured packages set up" >&2; fi
}
if ! $SUDO apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}" 2>&1 |
  tee -a "$log" | condense; then
  echo "setup: apt-get install failed:" >&2
  cat "$log" >&2
  exit 1
fi
rm -f "$log"
