#!/usr/bin/env bash
# setup.sh - installs every build and test dependency from Debian's packages.
# Idempotent and fast when everything is already there: apt-get runs only
# for packages that are missing. Needs root (or sudo) to install.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake pkg-config
  # libprofile, lcpid and the tools
  libelf-dev libdw-dev liblzma-dev libsqlite3-dev sqlite3 libspdlog-dev libcapstone-dev libcli11-dev
  # tests
  catch2 elfutils binutils linux-perf
  # separate debug files: libdebuginfod and zlib (the .gnu_debuglink CRC) for the tools;
  # the debuginfod server and curl for the interop tests
  libdebuginfod-dev debuginfod zlib1g-dev curl
  # the sanitizer configuration (ASan + UBSan) and libFuzzer: clang's runtime
  clang libclang-rt-dev
  # style.clang-format
  clang-format
  # bench/ workloads
  bzip2 python3
  # the kernel module and the QEMU harness that loads it into a real kernel
  linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio kmod xz-utils
)

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
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
