#!/bin/bash
# run-guest.sh - boot Debian's 6.1 kernel under QEMU, load lcpi.ko and run one
# host command inside the guest; exit with the command's exit status.
#
#   scripts/qemu/run-guest.sh [options] -- COMMAND [ARGS...]
#
# x86-64 (the default): the installed linux-image-amd64's kernel, or with
# --suite S Debian S's (trixie: 6.12), fetched with its own kbuild tools and
# compiler into the cache folder by fetch-kernel.sh. The guest
# sees the host's / read-only (9p), with fresh /proc, /sys, /dev, a tmpfs on
# /run (TMPDIR=/run/tmp), and one writable directory shared with the host,
# $LCPI_OUT (same path on both sides; kept after the run with --keep). So any
# host binary or script (lcpid, the tests, the build tree) runs unchanged.
#
# --arch arm64: Debian's arm64 kernel of the same version, fetched into the
# cache folder by fetch-kernel.sh (${LCPI_CACHE:-$HOME/.cache/lcpi}), booted
# under qemu-system-aarch64 (TCG, virt board, GICv3, emulated PMUv3); lcpi.ko
# is cross-built (aarch64-linux-gnu-) against its headers with the host's
# linux-kbuild. The guest cannot run the host's x86 programs: its shell and
# tools are arm64 busybox, /bin/bash runs busybox sh, and the host's / is not
# the guest's root; the repository, the build directory, the current
# directory and the folders of COMMAND's absolute-path arguments are mounted
# from it at their host paths (read-only), so COMMAND must be a shell script
# or a static arm64 program.
# The guest sets kernel.perf_cpu_time_max_percent=0 (emulated PMU interrupts
# are slow; perf would lower the sample rate).
# --arch arm64 --nmi: the same guest on a kernel built from Debian's
# linux-source-6.1 with CONFIG_ARM64_PSEUDO_NMI (build-nmi-kernel.sh; ~10 min
# the first time, then cached), booted with irqchip.gicv3_pseudo_nmi=1: the
# PMU's overflow interrupt is an NMI there, as on x86 hardware. That kernel
# is also the debug kernel (lockdep, KASAN, UBSAN, DEBUG_ATOMIC_SLEEP);
# --arch arm64 --debug boots it without irqchip.gicv3_pseudo_nmi=1, so the
# PMU's overflow is an ordinary interrupt, as on Debian's kernel.
#
# COMMAND runs as root with:
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
#   --kver V        kernel version (default: the one linux-image-amd64 names;
#                   x86-64 only)
#   --arch A        x86_64 (default) or arm64
#   --suite S       x86-64: Debian S's current kernel instead of the installed
#                   one (e.g. trixie, Debian 13's 6.12)
#   --nmi           arm64: the kernel with pseudo-NMIs (above)
#   --debug         arm64: the same debug kernel, the PMU interrupt an IRQ
#   --keep          keep the run directory (console log, shared dir)
# Environment: LCPI_GUEST_APPEND, more kernel command-line arguments.
# A guest whose kernel dies while booting, before /init printed its first
# line (nothing of lcpi has run: the module is loaded by the command), is
# booted once more, and said so; its console log is kept as
# console.boot-1.log. Debian 13's 6.12 under QEMU TCG sometimes takes an
# int3 oops in code the kernel is patching at boot (seen in enqueue_timer and
# sched_clock_cpu), a failure of the emulator's cross-CPU code patching, not
# of lcpi. A death after /init started is never retried.
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
ARCH=x86_64
SUITE=""
NMI=0
DEBUG=0
APPEND=""

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
	--timeout)
		case "$2" in
		'' | *[!0-9]*) echo "run-guest: --timeout takes whole seconds, not '$2'" >&2; exit 2 ;;
		esac
		TIMEOUT=$((10#$2)); shift 2 ;;
	--dmesg) DMESG=1; shift ;;
	--no-load) LOAD=0; shift ;;
	--smp) SMP=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--build-dir) BUILD=$2; shift 2 ;;
	--kver) KVER=$2; shift 2 ;;
	--arch) ARCH=$2; shift 2 ;;
	--suite) SUITE=$2; shift 2 ;;
	--nmi) NMI=1; DEBUG=1; shift ;;
	--debug) DEBUG=1; shift ;;
	--keep) KEEP=1; shift ;;
	--) shift; break ;;
	*) die "unknown option $1 (usage: run-guest.sh [options] -- COMMAND [ARGS])" ;;
	esac
done
[ $# -ge 1 ] || die "no COMMAND given"

# Per architecture: the kernel (KVER, its image, headers KDIR, modules
# MODDIR), the guest's busybox, the module's make arguments, the QEMU
# command, the serial console, the 9p transport's modules and devices, and
# whether the guest chroots into the host's / (CHROOT=1) or mounts parts of
# it (CHROOT=0).
# Debian SUITE's amd64 kernel from the cache (fetch-kernel.sh): its image,
# modules, headers, and the make arguments naming its compiler and pahole.
setup_x86_64_suite() {
	local out rc=0
	out=$("$HERE/fetch-kernel.sh" amd64 "$SUITE") || rc=$?
	[ "$rc" = 0 ] || { [ "$rc" = 77 ] && skip "fetch-kernel.sh amd64 $SUITE could not fetch the kernel"; die "fetch-kernel.sh amd64 $SUITE failed"; }
	KVER=$(basename "$out")
	KDIR=$out/root/usr/src/linux-headers-$KVER
	MODDIR=$out/root/usr/lib/modules/$KVER
	VMLINUZ=$out/root/boot/vmlinuz-$KVER
	[ -f "$out/make-args" ] || die "$out has no make-args (no kbuild tools for $KVER)"
	read -ra MAKEARGS <"$out/make-args"
	# No CMPXCHG16B: QEMU 7.2's TCG now and then pushes a garbage frame (an
	# EFLAGS made of RAX's bits) for an interrupt taken right after
	# SLUB's this-cpu cmpxchg16b on Debian 13's 6.12, a double fault in
	# CPU hotplug; without the feature SLUB takes its other path
	# (docs/kmod.md). lcpi uses no 128-bit cmpxchg.
	QEMU=(qemu-system-x86_64 -accel tcg -cpu max,cx16=off)
}

setup_x86_64() {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
	[ -x /bin/busybox ] || skip "no /bin/busybox (busybox-static)"
	BUSYBOX=/bin/busybox
	QEMU=(qemu-system-x86_64 -accel tcg -cpu max)
	CONSOLE=ttyS0
	NINEP_MODULES=(9p 9pnet_virtio virtio_pci)
	NINEP_DEV=""
	CHROOT=1
	if [ -n "$SUITE" ]; then
		setup_x86_64_suite
		return
	fi
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
	VMLINUZ=/boot/vmlinuz-$KVER
	[ -f "$VMLINUZ" ] || skip "missing $VMLINUZ"
	[ -d "$KDIR" ] || skip "missing $KDIR (apt-get install linux-headers-amd64)"
	[ -d "$MODDIR/kernel" ] || skip "missing $MODDIR/kernel"
	MAKEARGS=()
}

setup_arm64() {
	[ -z "$SUITE" ] || die "--suite is for x86-64 guests only"
	command -v qemu-system-aarch64 >/dev/null || skip "no qemu-system-aarch64 (qemu-system-arm)"
	command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu)"
	local out root rc=0
	out=$("$HERE/fetch-kernel.sh" arm64) || rc=$?
	[ "$rc" = 0 ] || { [ "$rc" = 77 ] && skip "fetch-kernel.sh arm64 could not fetch the kernel"; die "fetch-kernel.sh arm64 failed"; }
	KVER=$(basename "$out")
	root=$out/root
	KDIR=$root/usr/src/linux-headers-$KVER
	MODDIR=$root/lib/modules/$KVER
	BUSYBOX=$root/bin/busybox
	[ -d "$KDIR/scripts/mod" ] || skip "$KDIR has no host kbuild tools (apt-get install linux-kbuild of its version)"
	# Debian's arm64 vmlinuz is the uncompressed Image ("ARM\x64" at byte 56):
	# QEMU's -kernel boots it directly.
	IMAGE=$root/boot/vmlinuz-$KVER
	[ "$(od -An -c -j56 -N4 "$IMAGE" | tr -d ' ')" = 'ARMd' ] || die "$IMAGE is not an uncompressed arm64 Image"
	MAKEARGS=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	# pauth-impdef=on: QEMU's cheap pointer-authentication hash; with the
	# architected QARMA one, boot is about 4x slower
	QEMU=(qemu-system-aarch64 -M 'virt,gic-version=3' -accel tcg -cpu 'max,pauth-impdef=on')
	CONSOLE=ttyAMA0
	# virtio-mmio (built into the board's device tree), not PCI: the PCI host
	# driver is a module too
	NINEP_MODULES=(9p 9pnet_virtio virtio_mmio)
	NINEP_DEV=virtio-9p-device
	CHROOT=0
	[ "$DEBUG" = 0 ] || setup_arm64_nmi
}

# The kernel with pseudo-NMIs instead of Debian's (the busybox stays
# Debian's): its built tree is what lcpi.ko builds against, and it has the
# 9p modules built in.
setup_arm64_nmi() {
	local out rc=0
	out=$("$HERE/build-nmi-kernel.sh") || rc=$?
	[ "$rc" = 0 ] || { [ "$rc" = 77 ] && skip "build-nmi-kernel.sh could not build the NMI kernel"; die "build-nmi-kernel.sh failed"; }
	KVER=$(cat "$out/kernelrelease")
	KDIR=$out/src
	MODDIR=$out/root/lib/modules/$KVER
	IMAGE=$KDIR/arch/arm64/boot/Image
	[ "$NMI" = 0 ] || APPEND="irqchip.gicv3_pseudo_nmi=1"
	# UBSAN in lcpi.ko (the kernel itself is built without it:
	# nmi-kernel.config)
	MAKEARGS+=(UBSAN_SANITIZE=y)
}

[ "$DEBUG" = 0 ] || [ "$ARCH" = arm64 ] || [ "$ARCH" = aarch64 ] || die "--nmi and --debug are for arm64 guests only"
case "$ARCH" in
x86_64 | amd64) ARCH=x86_64; setup_x86_64 ;;
arm64 | aarch64) ARCH=arm64; setup_arm64 ;;
*) die "unknown --arch $ARCH (x86_64 or arm64)" ;;
esac

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
if ! make -s -C "$KDIR" "${MAKEARGS[@]}" M="$KB" modules >"$KB/build.log" 2>&1; then
	cat "$KB/build.log" >&2
	die "building lcpi.ko failed"
fi
# The module builds warning-free (compiler and modpost) on every kernel it
# is tested on. (6.1's kbuild also says it skips BTF: not a warning.)
if grep -qi warning "$KB/build.log"; then
	cat "$KB/build.log" >&2
	die "lcpi.ko built with warnings against $KVER"
fi
if [ "$ARCH" = x86_64 ]; then
	IMAGE="$BUILD/$KVER/vmlinux"
	if [ ! -s "$IMAGE" ] || [ "$VMLINUZ" -nt "$IMAGE" ]; then
		python3 "$HERE/extract-vmlinux.py" "$VMLINUZ" "$IMAGE" ||
			die "cannot extract vmlinux from $VMLINUZ"
	fi
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
for m in "${NINEP_MODULES[@]}"; do
	rel=$(grep -o "^[^:]*/$m\.ko[.a-z]*:" "$MODDIR/modules.dep" | tr -d : | head -n1 || true)
	if [ -z "$rel" ]; then
		# 6.12 builds virtio_pci in
		grep -q "/$m\.ko\$" "$MODDIR/modules.builtin" ||
			die "module $m neither in $MODDIR/modules.dep nor built in"
		continue
	fi
	add_mod "$rel"
done

# The initramfs: busybox, those modules, and an init that mounts the host.
IR="$RUN/initramfs"
mkdir -p "$IR"/{bin,dev,proc,sys,host,lib/modules}
cp "$BUSYBOX" "$IR/bin/busybox"
if [ "$CHROOT" = 0 ]; then
	# the guest scripts' #!/bin/bash, in a guest without the host's bash
	printf '#!/bin/busybox sh\nexec /bin/busybox sh "$@"\n' >"$IR/bin/bash"
	chmod 755 "$IR/bin/bash"
fi
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
	if [ "$ARCH" = arm64 ]; then
		echo "echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent"
	fi
	if [ "$LOAD" = 1 ]; then
		# shellcheck disable=SC2016 # expanded in the guest
		echo 'insmod "$LCPI_KO" || { echo "run-guest: insmod $LCPI_KO failed"; exit 99; }'
	fi
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$SHARED/.guest-cmd.sh"
# Without chroot, the host folders the guest mounts at their own paths.
if [ "$CHROOT" = 0 ]; then
	{
		echo "$REPO"
		echo "$BUILD"
		echo "$CWD"
		for a in "$@"; do
			case "$a" in /*) [ -e "$a" ] && dirname "$a" ;; esac
		done
	} | sort -u >"$SHARED/.guest-binds"
fi

echo "run-guest: $ARCH kernel $KVER, $SMP CPUs, timeout ${TIMEOUT}s: $*" >&2
if [ -z "$NINEP_DEV" ]; then
	SHARES=(-virtfs 'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap'
		-virtfs "local,path=$SHARED,mount_tag=lcpishared,security_model=none")
else
	SHARES=(-fsdev 'local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap'
		-device "$NINEP_DEV,fsdev=hostroot,mount_tag=hostroot"
		-fsdev "local,id=lcpishared,path=$SHARED,security_model=none"
		-device "$NINEP_DEV,fsdev=lcpishared,mount_tag=lcpishared")
fi
boot() {
	timeout -k 5 "$TIMEOUT" "${QEMU[@]}" \
		-smp "$SMP" -m "$MEM" \
		-nodefaults -display none -no-reboot -monitor none -serial stdio \
		-kernel "$IMAGE" -initrd "$RUN/initramfs.cpio" \
		-append "console=$CONSOLE quiet panic=-1 lcpi_shared=$SHARED lcpi_dmesg=$DMESG lcpi_chroot=$CHROOT lcpi_watchdog=$((TIMEOUT * 4 / 5)) $APPEND ${LCPI_GUEST_APPEND:-}" \
		"${SHARES[@]}" \
		</dev/null 2>&1 | sed -u 's/\r$//' | tee "$RUN/console.log"
	QRC=${PIPESTATUS[0]}
}
set +e
boot
if [ "$QRC" != 124 ] && [ "$QRC" != 137 ] && ! grep -q '^LCPI-GUEST-INIT$' "$RUN/console.log"; then
	mv "$RUN/console.log" "$RUN/console.boot-1.log"
	echo "run-guest: the guest kernel died while booting, before /init ran (qemu $QRC;" \
		"log: $RUN/console.boot-1.log); booting once more" >&2
	KEEP=1
	boot
fi
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
