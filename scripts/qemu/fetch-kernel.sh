#!/bin/bash
# fetch-kernel.sh ARCH [SUITE] - downloads one of Debian's kernels (image,
# headers, -common headers) and busybox-static for ARCH with `apt-get
# download`, unpacks them with `dpkg -x` into a cache folder outside the
# source tree, and prints that folder. Nothing is installed on the host.
#
#   ARCH   a Debian architecture: arm64, amd64, ...
#   SUITE  a Debian suite (default: the host's, e.g. bookworm)
#
# The cache is ${LCPI_CACHE:-$HOME/.cache/lcpi}; it is made when missing and
# reused: a kernel already unpacked is printed at once, with no network.
#   $LCPI_CACHE/apt/SUITE-ARCH/       a private apt state (sources, lists)
#   $LCPI_CACHE/kernels/KVER/debs/    the downloaded .debs
#   $LCPI_CACHE/kernels/KVER/root/    them unpacked: boot/, lib/modules/KVER,
#                                     usr/src/linux-headers-KVER, bin/busybox
#
# Which kernel: in the host's suite, the ABI the host's linux-image-amd64
# depends on (6.1.0-N), at the host's installed version, so the host's
# linux-kbuild-6.1 (x86 fixdep, modpost) fits the headers; in another
# suite, the one that suite's linux-image-ARCH depends on.
#
# Another suite's amd64 kernel (Debian 13's 6.12 on this Debian 12 host)
# comes with what builds a module for it: that suite's linux-kbuild and the
# compiler the kernel was built with (gcc-14, which Debian 12 lacks: gcc-12
# refuses the kernel's -fmin-function-alignment), pahole for BTF, and the
# libraries they load, all unpacked beside it; patchelf points each of
# those programs at those libraries (their glibc is newer than the host's),
# so they run here unchanged and nothing on the host is replaced. The make
# arguments that select them are in KVER/make-args.
#
# Exit status: 0 and the folder on stdout; 77 if this host cannot do it
# (no apt-get, dpkg or depmod; the archive unreachable, or without the
# wanted version); 1 on other errors.
set -euo pipefail

ARCH=${1:?usage: fetch-kernel.sh ARCH [SUITE]}
HOST_SUITE=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null || true)
SUITE=${2:-$HOST_SUITE}
CACHE=${LCPI_CACHE:-$HOME/.cache/lcpi}

say() { echo "fetch-kernel: $*" >&2; }
skip() {
	say "cannot fetch here: $*"
	exit 77
}
for tool in apt-get dpkg depmod; do
	command -v "$tool" >/dev/null || skip "no $tool"
done
[ -n "$SUITE" ] || skip "no suite given and /etc/os-release names none"

# shellcheck source=scripts/qemu/apt-private.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-private.sh"

# The kernel ABI (6.1.0-N) and the exact version wanted, when the host has
# them: its own linux-image-amd64's kernel, in its own suite.
WANT_ABI=""
WANT_VERSION=""
if [ "$SUITE" = "$HOST_SUITE" ]; then
	host_kernel
	WANT_ABI=$HOST_KABI
	WANT_VERSION=$HOST_KVERSION
fi

# A finished unpack whose headers have their kbuild tools (an older
# script cached some without): nothing to do.
usable() { [ -f "$1/.complete" ] && [ -d "$1/root/usr/src/linux-headers-$2/scripts/mod" ]; }
if [ -n "$WANT_ABI" ] && usable "$CACHE/kernels/$WANT_ABI-$ARCH" "$WANT_ABI-$ARCH"; then
	echo "$CACHE/kernels/$WANT_ABI-$ARCH"
	exit 0
fi

# A private apt state: the host's archive for SUITE, lists for ARCH only;
# the host's dpkg is not touched.
apt_private "$SUITE" "$ARCH" || skip "apt-get update for $SUITE/$ARCH failed"

if [ -z "$WANT_ABI" ]; then
	WANT_ABI=$(apt-cache "${APT[@]}" depends "linux-image-$ARCH" 2>/dev/null |
		sed -n "s/.*Depends: linux-image-\([0-9][^ ]*\)-$ARCH\$/\1/p" | head -n1)
	[ -n "$WANT_ABI" ] || { say "no linux-image-$ARCH in $SUITE"; exit 1; }
fi
KVER=$WANT_ABI-$ARCH
OUT="$CACHE/kernels/$KVER"
if usable "$OUT" "$KVER"; then
	echo "$OUT"
	exit 0
fi

# pkg=version pins the image and headers to the host's version.
pin() { if [ -n "$WANT_VERSION" ]; then echo "$1=$WANT_VERSION"; else echo "$1"; fi; }
PKGS=("$(pin "linux-image-$KVER")" "$(pin "linux-headers-$KVER")"
	"$(pin "linux-headers-$WANT_ABI-common")" busybox-static)

say "downloading ${PKGS[*]} into $OUT"
rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp/debs" "$OUT.tmp/root"
# A failure here is this host's state, not lcpi's: no network, or the
# archive no longer has the host kernel's version (upgrade the host).
(cd "$OUT.tmp/debs" && apt-get "${APT[@]}" download -q "${PKGS[@]}" >&2) ||
	skip "apt-get download ${PKGS[*]} failed"
for deb in "$OUT.tmp"/debs/*.deb; do
	dpkg -x "$deb" "$OUT.tmp/root"
done
# What installing the packages would have done: modules.dep (the guest's
# initramfs takes modules in dependency order from it).
# (Debian 13's packages put them under usr/lib/modules: merged /usr.)
base=$OUT.tmp/root
[ -d "$base/lib/modules/$KVER" ] || base=$base/usr
depmod -b "$base" "$KVER" || { say "depmod failed"; exit 1; }
# The headers include the -common Makefile by its absolute /usr/src path:
# point that at the unpacked copy, so the host needs no headers of KVER.
hdr="$OUT.tmp/root/usr/src/linux-headers-$KVER"
sed -i "s|^include /usr/src/|include $OUT/root/usr/src/|" "$hdr/Makefile"
# Their scripts/ and tools/ link to ../../lib/linux-kbuild-VERSION: the
# host-runnable kbuild tools (fixdep, modpost). When the host has that
# linux-kbuild of the same upstream release (a kernel of its own suite),
# use it; for an amd64 kernel of another suite, fetch its own (see the
# top). The upstream part only: Debian's revisions of the two may differ
# (bookworm-security shipped linux-kbuild-6.1 6.1.192-3 beside the
# headers' 6.1.192-2, and every arm64 guest test was skipped).
kbuild=$(readlink "$hdr/scripts" | sed -n 's|^\.\./\.\./lib/\(linux-kbuild-[^/]*\)/scripts$|\1|p')
# installed ("ii"), not a removed package dpkg still lists
host_kbuild=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$kbuild" 2>/dev/null |
	sed -n 's/^ii *//p' || true)
if [ -n "$kbuild" ] && [ -n "$WANT_VERSION" ] && [ -n "$host_kbuild" ] &&
	[ "${host_kbuild%-*}" = "${WANT_VERSION%-*}" ]; then
	ln -sfn "/usr/lib/$kbuild" "$OUT.tmp/root/usr/lib/$kbuild"
elif [ -n "$kbuild" ] && [ "$ARCH" = amd64 ] && [ "$(uname -m)" = x86_64 ]; then
	command -v patchelf >/dev/null || skip "no patchelf, needed to run $SUITE's kbuild tools here"
	deps=$(apt-cache "${APT[@]}" show "linux-headers-$KVER" | sed -n 's/^Depends: //p' | head -n1)
	gcc=$(grep -o "gcc-[0-9][0-9]*" <<<"$deps" | head -n1)
	[ -n "$gcc" ] || { say "linux-headers-$KVER names no gcc: $deps"; exit 1; }
	TOOLS=("$kbuild" "$gcc" "$gcc-x86-64-linux-gnu" "cpp-${gcc#gcc-}-x86-64-linux-gnu" pahole
		libc6 libgcc-s1 libstdc++6 libgmp10 libisl23 libmpc3 libmpfr6 libzstd1 zlib1g
		libelf1t64 libdw1t64 libbpf1 liblzma5 libbz2-1.0)
	say "downloading $SUITE's kbuild, $gcc and pahole for $KVER"
	mkdir -p "$OUT.tmp/tools"
	(cd "$OUT.tmp/tools" && apt-get "${APT[@]}" download -q "${TOOLS[@]}" >&2) ||
		skip "apt-get download ${TOOLS[*]} failed"
	for deb in "$OUT.tmp"/tools/*.deb; do
		dpkg -x "$deb" "$OUT.tmp/root"
	done
	libs=$OUT/root/usr/lib/x86_64-linux-gnu
	while IFS= read -r -d '' f; do
		if patchelf --print-interpreter "$f" >/dev/null 2>&1; then
			patchelf --set-interpreter "$libs/ld-linux-x86-64.so.2" --set-rpath "$libs" "$f"
		fi
	done < <(find "$OUT.tmp/root/usr/lib/$kbuild" "$OUT.tmp/root/usr/bin" \
		"$OUT.tmp/root/usr/libexec" -type f -perm -u+x -print0)
	echo "CC=$OUT/root/usr/bin/x86_64-linux-gnu-$gcc PAHOLE=$OUT/root/usr/bin/pahole" \
		>"$OUT.tmp/make-args"
else
	# Not cached: a later run, once the host has that kbuild, unpacks again.
	rm -rf "$OUT.tmp"
	skip "no host $kbuild of version ${WANT_VERSION%-*} (the host has ${host_kbuild:-none}): modules cannot be built against $KVER"
fi
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
touch "$OUT/.complete"
say "unpacked $KVER into $OUT"
echo "$OUT"
