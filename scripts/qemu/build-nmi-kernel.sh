#!/bin/bash
# build-nmi-kernel.sh - builds, once, the arm64 guest kernel whose PMU
# interrupt is an NMI (run-guest.sh --arch arm64 --nmi), and prints its
# folder. Debian's own arm64 kernel has no CONFIG_ARM64_PSEUDO_NMI, so there
# lcpi.ko's overflow handler runs as an ordinary interrupt; on x86 hardware
# it runs in NMI context. This kernel, booted with
# irqchip.gicv3_pseudo_nmi=1, takes the PMU overflow as a (GICv3 priority)
# pseudo-NMI: "hw perfevents: ... using NMIs", in_nmi() in the handler.
# It is also the debug kernel: lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP,
# generic KASAN and UBSAN (nmi-kernel.config), whose reports fail the tests
# that boot it (tests/kmod/dmesg-check.sh); lcpi.ko built against it is
# instrumented too.
#
#   scripts/qemu/build-nmi-kernel.sh
#
# The source is Debian's linux-source-6.1 at the host kernel's version (the
# same source as the stock arm64 guest kernel fetch-kernel.sh fetches),
# downloaded with `apt-get download` through a private apt state
# (apt-private.sh), never installed; the .deb is deleted once unpacked. It
# is configured with `make allnoconfig` plus nmi-kernel.config (the least the
# guest and the tests need) and cross-compiled with aarch64-linux-gnu-gcc,
# -j$(nproc): ~10 min on 2 cores, the first time only.
#
# The folder is ${LCPI_CACHE:-$HOME/.cache/lcpi}/kernels/nmi-VERSION-KEY/,
# KEY a hash of nmi-kernel.config and the cross compiler's version: a later
# run finds it complete and prints it at once; a changed config or compiler
# builds a new one beside it (delete old nmi-* folders by hand, ~2 GB each).
# Concurrent runs wait for one build. Inside:
#   src/                     the built tree: lcpi.ko builds against it (M=),
#                            QEMU boots src/arch/arm64/boot/Image
#   root/lib/modules/KVER/   modules.builtin and modules.dep (everything the
#                            guest needs is built in)
#   kernelrelease            KVER (6.1.N-lcpi-nmi)
#   build.log, build-seconds the build's output and its wall time
#
# Exit status: 0 and the folder on stdout; 77 if this host cannot build it
# (no cross compiler, flex, bison, bc, or no package to download); 1 if the
# build fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${LCPI_CACHE:-$HOME/.cache/lcpi}
FRAGMENT=$HERE/nmi-kernel.config
CROSS=aarch64-linux-gnu-

say() { echo "build-nmi-kernel: $*" >&2; }
skip() {
	say "cannot build here: $*"
	exit 77
}
for tool in apt-get dpkg-deb "${CROSS}gcc" flex bison bc make xz; do
	command -v "$tool" >/dev/null || skip "no $tool (scripts/setup.sh installs it)"
done

# shellcheck source=scripts/qemu/apt-private.sh
. "$HERE/apt-private.sh"
SUITE=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null || true)
[ -n "$SUITE" ] || skip "/etc/os-release names no suite"
# The host kernel's version, as fetch-kernel.sh takes for the stock guest
# kernel; on a host without linux-image-amd64, the newest in the lists.
host_kernel
VERSION=$HOST_KVERSION
KEY=$({ cat "$FRAGMENT"; "${CROSS}gcc" --version | head -n1; } | sha256sum | cut -c1-12)
if [ -n "$VERSION" ] && [ -f "$CACHE/kernels/nmi-$VERSION-$KEY/.complete" ]; then
	echo "$CACHE/kernels/nmi-$VERSION-$KEY"
	exit 0
fi
apt_private "$SUITE" arm64 || skip "apt-get update for $SUITE/arm64 failed"
if [ -z "$VERSION" ]; then
	VERSION=$(apt-cache "${APT[@]}" policy linux-source-6.1 2>/dev/null |
		sed -n 's/^ *Candidate: //p')
	if [ -z "$VERSION" ] || [ "$VERSION" = "(none)" ]; then skip "no linux-source-6.1 in $SUITE"; fi
fi
OUT=$CACHE/kernels/nmi-$VERSION-$KEY

mkdir -p "$CACHE/kernels"
exec 8>"$CACHE/kernels/.nmi-build.lock"
flock 8
# another run may have built it while this one waited
if [ -f "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi

say "building the NMI kernel from linux-source-6.1 $VERSION into $OUT (~10 min on 2 cores)"
start=$(date +%s)
rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp/src" "$OUT.tmp/root"
(cd "$OUT.tmp" && apt-get "${APT[@]}" download -q "linux-source-6.1=$VERSION" >&2) ||
	skip "apt-get download linux-source-6.1=$VERSION failed"
deb=$(ls "$OUT.tmp"/linux-source-6.1_*.deb)
# the package holds the tree as one .tar.xz; the manuals stay out but
# Documentation/Kconfig, which lib/Kconfig.debug sources
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.1.tar.xz | xz -dc -T0 |
	tar -x -C "$OUT.tmp/src" --strip-components=1 \
		--exclude='linux-source-6.1/Documentation/[!K]*'
rm -f "$deb"
[ -f "$OUT.tmp/src/Documentation/Kconfig" ] || { say "the source has no Documentation/Kconfig"; exit 1; }

MAKE=(make -C "$OUT.tmp/src" ARCH=arm64 CROSS_COMPILE="$CROSS")
{
	"${MAKE[@]}" KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig
	# an option whose dependencies are not met is dropped silently: say so
	missing=0
	while IFS= read -r line; do
		case "$line" in '' | '#'*) continue ;; esac
		grep -qxF "$line" "$OUT.tmp/src/.config" || { echo "not in the .config: $line"; missing=1; }
	done <"$FRAGMENT"
	[ "$missing" = 0 ]
	"${MAKE[@]}" -j"$(nproc)" Image modules
	"${MAKE[@]}" INSTALL_MOD_PATH="$OUT.tmp/root" modules_install
} >"$OUT.tmp/build.log" 2>&1 || {
	tail -n 40 "$OUT.tmp/build.log" >&2
	say "the build failed (log: $OUT.tmp/build.log)"
	exit 1
}
"${MAKE[@]}" -s kernelrelease >"$OUT.tmp/kernelrelease"
echo $(($(date +%s) - start)) >"$OUT.tmp/build-seconds"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
touch "$OUT/.complete"
say "built $(cat "$OUT/kernelrelease") in $(cat "$OUT/build-seconds") s: $OUT"
echo "$OUT"
