#!/bin/bash
# run-guest.sh - boot Debian's 6.1 kernel under QEMU, load lcpi.ko and run one
# host command inside the guest; exit with the command's exit status.
#
#   scripts/qemu/run-guest.sh [options] -- COMMAND [ARGS...]
#
# The guest sees the host's / read-only (9p), with fresh /proc, /sys, /dev,
# a tmpfs on /run (TMPDIR=/run/tmp), and one writable directory shared with the host,
# $LCPI_OUT (same path on both sides; kept after the run with --keep). So any
# host binary or script (lcpid, the tests, the build tree) runs unchanged.
# COMMAND runs as root in the host's root directory tree with:
#   LCPI_KO     the lcpi.ko just built (already loaded unless --no-load)
#   LCPI_OUT    the writable shared directory of this run
#   LCPI_REPO   this source tree
# Options:
#   --timeout S     kill the guest after S seconds (default 180): exit 124
#   --dmesg         print the guest's kernel log after COMMAND
#   --no-load       do not insmod lcpi.ko before COMMAND
#   --smp N         guest CPUs (default 2); --mem MB (default 1024)
#   --build-dir D   where lcpi.ko, the vmlinux and run logs go
#                   (default $LCPI_QEMU_BUILD or <repo>/build-qemu)
#   --kver V        kernel version (default: the one linux-image-amd64 names)
#   --keep          keep the run directory (console log, shared dir)
# Exit status: COMMAND's, 124 on timeout, 125 if the guest died without
# reporting one, 126 if the harness itself failed (build, boot), 77 if this
# host lacks what it needs (kernel image, headers, qemu): CTest skips.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$REPO/scripts/qemu"
TIMEOUT=180
DMESG=0
LOAD=1
SMP=2
MEM=1024
KEEP=0
BUILD=${LCPI_QEMU_BUILD:-$REPO/build-qemu}
KVER=""

die() {
	echo "run-guest: $*" >&2
	exit 126
}

skip() {
	echo "run-guest: cannot run here: $*" >&2
	exit 77
}

while [ $# -gt 0 ]; do
	case "$1" in
	--timeout) TIMEOUT=$2; shift 2 ;;
	--dmesg) DMESG=1; shift ;;
	--no-load) LOAD=0; shift ;;
	--smp) SMP=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--build-dir) BUILD=$2; shift 2 ;;
	--kver) KVER=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--) shift; break ;;
	*) die "unknown option $1 (usage: run-guest.sh [options] -- COMMAND [ARGS])" ;;
	esac
done
[ $# -ge 1 ] || die "no COMMAND given"

# The kernel linux-image-amd64 depends on, else the newest installed.
if [ -z "$KVER" ]; then
	KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([0-9][^ ,]*-amd64\).*/\1/p' | head -n1)
fi
if [ -z "$KVER" ]; then
	# shellcheck disable=SC2012
	KVER=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1 |
		sed 's|/boot/vmlinuz-||')
fi
[ -n "$KVER" ] || skip "no Debian 6.1 kernel installed (apt-get install linux-image-amd64)"
KDIR=/usr/src/linux-headers-$KVER
MODDIR=/lib/modules/$KVER
[ -f "/boot/vmlinuz-$KVER" ] || skip "missing /boot/vmlinuz-$KVER"
[ -d "$KDIR" ] || skip "missing $KDIR (apt-get install linux-headers-amd64)"
[ -d "$MODDIR/kernel" ] || skip "missing $MODDIR/kernel"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
[ -x /bin/busybox ] || skip "no /bin/busybox (busybox-static)"

mkdir -p "$BUILD/$KVER/runs"
BUILD=$(cd "$BUILD" && pwd)
KB="$BUILD/$KVER/kmod"

# Build lcpi.ko and the uncompressed kernel once per source change; runs in
# parallel (ctest -j) take turns here.
exec 9>"$BUILD/$KVER/.lock"
flock 9
mkdir -p "$KB/include"
cp -p "$REPO"/kmod/Kbuild "$REPO"/kmod/Makefile "$REPO"/kmod/*.c "$REPO"/kmod/*.h "$KB/"
cp -p "$REPO"/kmod/include/*.h "$KB/include/"
if ! make -s -C "$KDIR" M="$KB" modules >"$KB/build.log" 2>&1; then
	cat "$KB/build.log" >&2
	die "building lcpi.ko failed"
fi
VMLINUX="$BUILD/$KVER/vmlinux"
if [ ! -s "$VMLINUX" ] || [ "/boot/vmlinuz-$KVER" -nt "$VMLINUX" ]; then
	python3 "$HERE/extract-vmlinux.py" "/boot/vmlinuz-$KVER" "$VMLINUX" ||
		die "cannot extract vmlinux from /boot/vmlinuz-$KVER"
fi
flock -u 9

RUN=$(mktemp -d "$BUILD/$KVER/runs/run.XXXXXX")
SHARED="$RUN/shared"
mkdir -p "$SHARED"

# Modules 9p over virtio needs, dependencies first (from modules.dep).
declare -A SEEN=()
ORDER=()
add_mod() {
	local rel=$1 dep
	[ -n "${SEEN[$rel]:-}" ] && return
	SEEN[$rel]=1
	# shellcheck disable=SC2013
	for dep in $(sed -n "s|^$rel: *||p" "$MODDIR/modules.dep"); do
		add_mod "$dep"
	done
	ORDER+=("$rel")
}
for m in 9p 9pnet_virtio virtio_pci; do
	rel=$(grep -o "^[^:]*/$m\.ko[.a-z]*:" "$MODDIR/modules.dep" | tr -d : | head -n1)
	[ -n "$rel" ] || die "module $m not in $MODDIR/modules.dep"
	add_mod "$rel"
done

# The initramfs: busybox, those modules, and an init that mounts the host.
IR="$RUN/initramfs"
mkdir -p "$IR"/{bin,dev,proc,sys,host,lib/modules}
cp /bin/busybox "$IR/bin/busybox"
: >"$IR/modules.order"
for rel in "${ORDER[@]}"; do
	case "$rel" in
	*.xz) xz -dc "$MODDIR/$rel" >"$IR/lib/modules/$(basename "${rel%.xz}")" ;;
	*) cp "$MODDIR/$rel" "$IR/lib/modules/" ;;
	esac
	basename "${rel%.xz}" >>"$IR/modules.order"
done
cp "$HERE/guest-init.sh" "$IR/init"
chmod 755 "$IR/init"
(cd "$IR" && find . | cpio -o -H newc --quiet) >"$RUN/initramfs.cpio"
rm -rf "$IR"

# What the guest runs, in the host's tree: written to the shared directory.
CWD=$(pwd)
{
	echo "export LCPI_KO=$(printf %q "$KB/lcpi.ko")"
	echo "export LCPI_OUT=$(printf %q "$SHARED")"
	echo "export LCPI_REPO=$(printf %q "$REPO")"
	echo "export LCPI_GUEST=1"
	# a sanitizer tree's programs keep their options (scripts/sanitize-env.sh)
	for v in ASAN_OPTIONS UBSAN_OPTIONS; do
		[ -z "${!v:-}" ] || echo "export $v=$(printf %q "${!v}")"
	done
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root TMPDIR=/run/tmp"
	echo "mkdir -p /run/tmp"
	echo "cd $(printf %q "$CWD") 2>/dev/null || cd /"
	if [ "$LOAD" = 1 ]; then
		# shellcheck disable=SC2016 # expanded in the guest
		echo 'insmod "$LCPI_KO" || { echo "run-guest: insmod $LCPI_KO failed"; exit 99; }'
	fi
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$SHARED/.guest-cmd.sh"

echo "run-guest: kernel $KVER, $SMP CPUs, timeout ${TIMEOUT}s: $*" >&2
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 \
	-accel tcg -cpu max -smp "$SMP" -m "$MEM" \
	-nodefaults -display none -no-reboot -monitor none -serial stdio \
	-kernel "$VMLINUX" -initrd "$RUN/initramfs.cpio" \
	-append "console=ttyS0 quiet panic=-1 lcpi_shared=$SHARED lcpi_dmesg=$DMESG" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$SHARED,mount_tag=lcpishared,security_model=none" \
	</dev/null 2>&1 | sed -u 's/\r$//' | tee "$RUN/console.log"
QRC=${PIPESTATUS[0]}
set -e

RC=$(sed -n 's/^LCPI-GUEST-EXIT=\([0-9]*\)$/\1/p' "$RUN/console.log" | tail -n1)
if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
	echo "run-guest: timed out after ${TIMEOUT}s (log: $RUN/console.log)" >&2
	exit 124
fi
if [ -z "$RC" ]; then
	echo "run-guest: the guest reported no exit status (qemu $QRC; log: $RUN/console.log)" >&2
	exit 125
fi
echo "run-guest: guest exit status $RC" >&2
if [ "$KEEP" = 0 ] && [ "$RC" = 0 ]; then
	rm -rf "$RUN"
else
	echo "run-guest: run kept in $RUN" >&2
fi
exit "$RC"
