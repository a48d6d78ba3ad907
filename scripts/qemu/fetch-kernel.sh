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

# The kernel ABI (6.1.0-N) and the exact version wanted, when the host has
# them: its own linux-image-amd64's kernel, in its own suite.
WANT_ABI=""
WANT_VERSION=""
if [ "$SUITE" = "$HOST_SUITE" ]; then
	hostkver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([0-9][^ ,]*\)-amd64.*/\1/p' | head -n1)
	if [ -n "$hostkver" ]; then
		WANT_ABI=$hostkver
		WANT_VERSION=$(dpkg-query -W -f='${Version}' "linux-image-$hostkver-amd64" 2>/dev/null || true)
	fi
fi

# A finished unpack of that kernel: nothing to do.
if [ -n "$WANT_ABI" ] && [ -f "$CACHE/kernels/$WANT_ABI-$ARCH/.complete" ]; then
	echo "$CACHE/kernels/$WANT_ABI-$ARCH"
	exit 0
fi

# A private apt state: the host's archive for SUITE (same mirror as the
# host's own sources), lists for ARCH only; the host's dpkg is not touched.
APTDIR="$CACHE/apt/$SUITE-$ARCH"
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/sources.list.d"
if [ ! -f "$APTDIR/sources.list" ]; then
	mirror=http://deb.debian.org/debian
	security=http://deb.debian.org/debian-security
	cat >"$APTDIR/sources.list" <<EOF
deb [arch=$ARCH signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main
deb [arch=$ARCH signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE-updates main
deb [arch=$ARCH signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $SUITE-security main
EOF
fi
APT=(-o "Dir::Etc::SourceList=$APTDIR/sources.list"
	-o "Dir::Etc::SourceParts=$APTDIR/sources.list.d"
	-o "Dir::State::Lists=$APTDIR/lists"
	-o "Dir::Cache=$APTDIR/cache"
	-o "Dir::State::status=/dev/null"
	-o "APT::Architecture=$ARCH" -o "APT::Architectures::=$ARCH"
	-o "Debug::NoLocking=1")
# as root, apt's download sandbox user cannot write into the cache folder
[ "$(id -u)" != 0 ] || APT+=(-o "APT::Sandbox::User=root")
# Lists older than a day are refreshed (security updates replace kernels).
if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null)" ]; then
	say "updating the package lists of $SUITE for $ARCH in $APTDIR"
	apt-get "${APT[@]}" update -qq >&2 || skip "apt-get update for $SUITE/$ARCH failed"
fi

if [ -z "$WANT_ABI" ]; then
	WANT_ABI=$(apt-cache "${APT[@]}" depends "linux-image-$ARCH" 2>/dev/null |
		sed -n "s/.*Depends: linux-image-\([0-9][^ ]*\)-$ARCH\$/\1/p" | head -n1)
	[ -n "$WANT_ABI" ] || { say "no linux-image-$ARCH in $SUITE"; exit 1; }
fi
KVER=$WANT_ABI-$ARCH
OUT="$CACHE/kernels/$KVER"
if [ -f "$OUT/.complete" ]; then
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
depmod -b "$OUT.tmp/root" "$KVER" || { say "depmod failed"; exit 1; }
# The headers include the -common Makefile by its absolute /usr/src path:
# point that at the unpacked copy, so the host needs no headers of KVER.
hdr="$OUT.tmp/root/usr/src/linux-headers-$KVER"
sed -i "s|^include /usr/src/|include $OUT/root/usr/src/|" "$hdr/Makefile"
# Their scripts/ and tools/ link to ../../lib/linux-kbuild-MAJOR.MINOR: the
# host-runnable kbuild tools (fixdep, modpost). When the host has that
# linux-kbuild at the same version (a kernel of its own suite), use it; a
# kernel of another suite needs its own host tools (not done here).
kbuild=$(readlink "$hdr/scripts" | sed -n 's|^\.\./\.\./lib/\(linux-kbuild-[0-9.]*\)/scripts$|\1|p')
if [ -n "$kbuild" ] && [ -n "$WANT_VERSION" ] &&
	[ "$(dpkg-query -W -f='${Version}' "$kbuild" 2>/dev/null)" = "$WANT_VERSION" ]; then
	ln -sfn "/usr/lib/$kbuild" "$OUT.tmp/root/usr/lib/$kbuild"
else
	say "warning: no host $kbuild at version ${WANT_VERSION:-?}: modules cannot be built against $KVER yet"
fi
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
touch "$OUT/.complete"
say "unpacked $KVER into $OUT"
echo "$OUT"
